-- Sign-in sessions, kept by Airlock's own store on either database: the expiry in Unix
-- seconds (the earlier store wrote it as text, which the clean-up could not compare).
-- Sessions open before the upgrade end: people sign in again once.
DROP TABLE IF EXISTS tower_sessions;
CREATE TABLE tower_sessions (
    id          TEXT    PRIMARY KEY NOT NULL,
    data        BLOB    NOT NULL,
    expiry_date INTEGER NOT NULL
) STRICT;
CREATE INDEX tower_sessions_expiry ON tower_sessions (expiry_date);
