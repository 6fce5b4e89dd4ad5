-- Write less per call. A decision is stored once: the agent's answer is built from the
-- row (no stored response document), policy versions are stored once and referenced,
-- the redacted arguments only when redaction changed them (NULL: same as `arguments`),
-- the engine's details only when there are any (NULL: none). No index on
-- (agent_id, message_id): webhook-ids are random, so it dirtied a random page per insert;
-- the ledger recognises retries from the ids of the last minutes (`ledger::recent`).
-- SQLite cannot relax NOT NULL in place, so the table is rebuilt the documented way
-- (`store::migrate` turns foreign keys off around migrations and checks them after).

CREATE TABLE policy_versions (
    id              INTEGER PRIMARY KEY,
    version         TEXT    NOT NULL UNIQUE,
    first_used_ms   INTEGER NOT NULL
) STRICT;

INSERT INTO policy_versions (version, first_used_ms)
    SELECT policy_version, min(created_at_ms) FROM tool_calls GROUP BY policy_version ORDER BY 2;

CREATE TABLE tool_calls_lean (
    id                  TEXT    PRIMARY KEY,
    agent_id            TEXT    NOT NULL REFERENCES agents (id),
    message_id          TEXT    NOT NULL,
    body_sha256         BLOB    NOT NULL,
    session_id          TEXT    NOT NULL,
    trace_id            TEXT,
    turn_id             TEXT,
    tool                TEXT    NOT NULL,
    server              TEXT,
    arguments           TEXT    NOT NULL,
    arguments_redacted  TEXT,
    agent_reason        TEXT,
    plan                TEXT,
    on_behalf_of        TEXT,
    context             TEXT,
    callback_url        TEXT,
    trust               TEXT,
    status              TEXT    NOT NULL CHECK (status IN ('allowed', 'denied', 'pending', 'approved',
                            'modified', 'rejected', 'skipped', 'expired', 'cancelled', 'overridden')),
    blocked_by          TEXT,
    rule                TEXT,
    reason              TEXT    NOT NULL,
    risk                TEXT    NOT NULL,
    approvers_required  INTEGER NOT NULL,
    policy_id           INTEGER NOT NULL REFERENCES policy_versions (id),
    details             TEXT,
    pinned              TEXT,
    created_at_ms       INTEGER NOT NULL,
    expires_at_ms       INTEGER,
    decided_at_ms       INTEGER,
    decided_by          TEXT,
    comment             TEXT,
    final_arguments     TEXT,
    result_outcome      TEXT    CHECK (result_outcome IN ('ok', 'error')),
    result_summary      TEXT,
    result_duration_ms  INTEGER,
    result_at_ms        INTEGER
) STRICT;

INSERT INTO tool_calls_lean
    SELECT c.id, c.agent_id, c.message_id, c.body_sha256, c.session_id, c.trace_id, c.turn_id, c.tool,
           c.server, c.arguments, NULLIF(c.arguments_redacted, c.arguments), c.agent_reason, c.plan,
           c.on_behalf_of, c.context, c.callback_url, c.trust, c.status, c.blocked_by, c.rule, c.reason,
           c.risk, c.approvers_required, v.id, NULLIF(c.details, '{}'), c.pinned, c.created_at_ms,
           c.expires_at_ms, c.decided_at_ms, c.decided_by, c.comment, c.final_arguments,
           c.result_outcome, c.result_summary, c.result_duration_ms, c.result_at_ms
    FROM tool_calls c JOIN policy_versions v ON v.version = c.policy_version
    ORDER BY c.rowid;

DROP TABLE tool_calls;
ALTER TABLE tool_calls_lean RENAME TO tool_calls;

CREATE INDEX tool_calls_pending ON tool_calls (expires_at_ms) WHERE status = 'pending';
CREATE INDEX tool_calls_session ON tool_calls (session_id, created_at_ms);
