-- Guesses counted for every instance (server/src/auth/throttle.rs): sign-in attempts per
-- account and per client address, secret lookups and break-glass password checks per
-- user, each key's theoretical arrival time (GCRA). A key is a keyed hash of what it
-- counts (never a typed user name). Rows in the past are deleted.
CREATE TABLE login_throttle (
    key     TEXT    PRIMARY KEY,
    tat_ms  BIGINT  NOT NULL
);
