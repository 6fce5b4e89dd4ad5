-- Sign-in attempts counted for every instance (server/src/auth/throttle.rs): each
-- account's and client address's theoretical arrival time (GCRA). Rows in the past are
-- deleted.
CREATE TABLE login_throttle (
    key     TEXT    PRIMARY KEY,
    tat_ms  BIGINT  NOT NULL
);
