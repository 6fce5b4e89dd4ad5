-- What each ledger batch made happen on its instance (live events, long-poll wake-ups),
-- for the other instances to replay (realtime::cluster). Kept for ten minutes.
CREATE TABLE live_batches (
    seq         BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance    TEXT    NOT NULL,
    at_ms       BIGINT  NOT NULL,
    data        TEXT    NOT NULL
);
CREATE INDEX live_batches_at ON live_batches (at_ms);
