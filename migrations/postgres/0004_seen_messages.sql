-- Webhook-ids of signed requests other than proposals (reads, cancels, results), for the
-- replay guard shared by every instance (on SQLite, one instance keeps them in memory).
-- Rows older than twice the timestamp tolerance are deleted.
CREATE TABLE seen_messages (
    agent_id        TEXT    NOT NULL,
    message_id      TEXT    NOT NULL,
    payload_sha256  BYTEA   NOT NULL,
    at_ms           BIGINT  NOT NULL,
    PRIMARY KEY (agent_id, message_id)
);
CREATE INDEX seen_messages_at ON seen_messages (at_ms);
