-- Agents: programs that propose tool calls, authenticated by a signing secret.
CREATE TABLE agents (
    id              TEXT    PRIMARY KEY,
    description     TEXT    NOT NULL DEFAULT '',
    disabled        INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL
) STRICT;

-- Signing secrets, sealed with the server key (never stored in clear). The current secret
-- has retires_at_ms NULL; after a rotation the old one stays valid until retires_at_ms.
CREATE TABLE agent_secrets (
    id              INTEGER PRIMARY KEY,
    agent_id        TEXT    NOT NULL REFERENCES agents (id),
    sealed          BLOB    NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    retires_at_ms   INTEGER
) STRICT;
CREATE INDEX agent_secrets_agent ON agent_secrets (agent_id);

-- Proposed tool calls: the queue and their lifecycle. (agent_id, message_id) is the
-- idempotency key: a retry of the same webhook-id returns `response` again.
CREATE TABLE tool_calls (
    id                  TEXT    PRIMARY KEY,
    agent_id            TEXT    NOT NULL REFERENCES agents (id),
    message_id          TEXT    NOT NULL,
    body_sha256         BLOB    NOT NULL,
    session_id          TEXT    NOT NULL,
    trace_id            TEXT,
    tool                TEXT    NOT NULL,
    server              TEXT,
    -- As sent: what the agent executes with. Shown and audited only in redacted form.
    arguments           TEXT    NOT NULL,
    arguments_redacted  TEXT    NOT NULL,
    agent_reason        TEXT,
    plan                TEXT,
    on_behalf_of        TEXT,
    context             TEXT,
    callback_url        TEXT,
    status              TEXT    NOT NULL CHECK (status IN ('allowed', 'denied', 'pending', 'approved',
                            'modified', 'rejected', 'skipped', 'expired', 'cancelled', 'overridden')),
    blocked_by          TEXT,
    rule                TEXT,
    reason              TEXT    NOT NULL,
    risk                TEXT    NOT NULL,
    approvers_required  INTEGER NOT NULL,
    policy_version      TEXT    NOT NULL,
    -- Engine details for reviewers: shadow findings, impact, pinned addresses (JSON).
    details             TEXT    NOT NULL,
    -- The first answer, replayed verbatim on retries.
    response            TEXT    NOT NULL,
    created_at_ms       INTEGER NOT NULL,
    expires_at_ms       INTEGER,
    decided_at_ms       INTEGER,
    decided_by          TEXT,
    comment             TEXT,
    -- Reviewer-modified arguments (status 'modified').
    final_arguments     TEXT,
    result_outcome      TEXT    CHECK (result_outcome IN ('ok', 'error')),
    result_summary      TEXT,
    result_duration_ms  INTEGER,
    result_at_ms        INTEGER,
    UNIQUE (agent_id, message_id)
) STRICT;
CREATE INDEX tool_calls_pending ON tool_calls (expires_at_ms) WHERE status = 'pending';
CREATE INDEX tool_calls_session ON tool_calls (session_id, created_at_ms);

-- Budget and rate-limit state, so limits survive restarts.
CREATE TABLE budget_usage (
    budget  TEXT    NOT NULL,
    scope   TEXT    NOT NULL,
    count   INTEGER NOT NULL DEFAULT 0,
    amount  REAL    NOT NULL DEFAULT 0,
    tat_ms  INTEGER,
    PRIMARY KEY (budget, scope)
) STRICT, WITHOUT ROWID;

-- Final decisions to POST to an agent's callback_url, with retry state.
CREATE TABLE callbacks (
    call_id         TEXT    PRIMARY KEY REFERENCES tool_calls (id),
    state           TEXT    NOT NULL CHECK (state IN ('queued', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at_ms      INTEGER NOT NULL,
    last_error      TEXT
) STRICT;
CREATE INDEX callbacks_due ON callbacks (next_at_ms) WHERE state = 'queued';

-- The audit trail: append-only and hash-chained (see server/src/audit).
CREATE TABLE audit_events (
    seq         INTEGER PRIMARY KEY,
    at_ms       INTEGER NOT NULL,
    kind        TEXT    NOT NULL,
    actor       TEXT    NOT NULL,
    call_id     TEXT,
    session_id  TEXT,
    data        TEXT    NOT NULL,
    prev_hash   TEXT    NOT NULL,
    hash        TEXT    NOT NULL
) STRICT;
CREATE INDEX audit_events_call ON audit_events (call_id) WHERE call_id IS NOT NULL;
CREATE INDEX audit_events_session ON audit_events (session_id) WHERE session_id IS NOT NULL;

CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
