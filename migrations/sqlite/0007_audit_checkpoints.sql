-- Signed checkpoints of the audit chain (see server/src/audit/checkpoint.rs): the chain's
-- hash at an event, signed with an Ed25519 key kept outside the database, so a stretch of
-- history rewritten with recomputed hashes no longer matches a signature.
CREATE TABLE audit_checkpoints (
    seq         INTEGER PRIMARY KEY,
    at_ms       INTEGER NOT NULL,
    hash        BLOB    NOT NULL CHECK (length(hash) = 32),
    public_key  BLOB    NOT NULL CHECK (length(public_key) = 32),
    signature   BLOB    NOT NULL CHECK (length(signature) = 64)
) STRICT;
