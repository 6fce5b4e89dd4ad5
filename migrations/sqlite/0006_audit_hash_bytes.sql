-- The audit chain stored once: each event keeps its own hash as 32 bytes; the previous
-- hash is the previous event's (verification derives it, so a deleted, inserted or edited
-- event still breaks the chain). The hashed document is unchanged: every event written
-- before this migration still verifies.
CREATE TABLE audit_events_chain (
    seq         INTEGER PRIMARY KEY,
    at_ms       INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    actor       TEXT    NOT NULL,
    call_id     TEXT,
    session_id  TEXT,
    data        TEXT    NOT NULL,
    hash        BLOB    NOT NULL CHECK (length(hash) = 32)
) STRICT;

INSERT INTO audit_events_chain (seq, at_ms, kind, actor, call_id, session_id, data, hash)
    SELECT seq, at_ms, kind, actor, call_id, session_id, data, unhex(hash) FROM audit_events ORDER BY seq;

DROP TABLE audit_events;
ALTER TABLE audit_events_chain RENAME TO audit_events;

CREATE INDEX audit_events_call ON audit_events (call_id) WHERE call_id IS NOT NULL;
CREATE INDEX audit_events_session ON audit_events (session_id) WHERE session_id IS NOT NULL;

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
