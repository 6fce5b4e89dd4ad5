-- Reviewer decisions: approvals towards a quorum, and approve-all grants.

-- One row per reviewer who approved a call; a call needing N approvers is released
-- when N distinct reviewers have a row here. The primary key forbids approving twice.
CREATE TABLE call_approvals (
    call_id     TEXT    NOT NULL REFERENCES tool_calls (id),
    reviewer    TEXT    NOT NULL,
    at_ms       INTEGER NOT NULL,
    PRIMARY KEY (call_id, reviewer)
) STRICT, WITHOUT ROWID;

-- "Approve all" grants: let the policy auto-allow later calls of one agent session for one
-- tool or one MCP server until expires_at_ms. `trust` is the session's context.trust
-- (JSON) when the grant was made: a call reporting another trust revokes the grant.
CREATE TABLE grants (
    id              TEXT    PRIMARY KEY,
    agent_id        TEXT    NOT NULL REFERENCES agents (id),
    session_id      TEXT    NOT NULL,
    scope_kind      TEXT    NOT NULL CHECK (scope_kind IN ('tool', 'server')),
    scope_name      TEXT    NOT NULL,
    trust           TEXT    NOT NULL,
    created_by      TEXT    NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    source_call_id  TEXT    REFERENCES tool_calls (id),
    revoked_at_ms   INTEGER,
    revoked_by      TEXT,
    revoke_reason   TEXT
) STRICT;
CREATE INDEX grants_active ON grants (agent_id, session_id) WHERE revoked_at_ms IS NULL;

-- The trust context each call reported (JSON of context.trust), for grant checks.
ALTER TABLE tool_calls ADD COLUMN trust TEXT;
