-- On-call: break-glass overrides, their post-hoc review, and escalations.

-- One row per break-glass: who, why, for how long; `ended_*` once it ended (time up,
-- ended by hand, or replaced by a new justification).
CREATE TABLE break_glass (
    id              TEXT    PRIMARY KEY,
    user            TEXT    NOT NULL,
    justification   TEXT    NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    ends_at_ms      INTEGER NOT NULL,
    ended_at_ms     INTEGER,
    ended_by        TEXT,
    end_reason      TEXT
) STRICT;

CREATE INDEX break_glass_open ON break_glass (ends_at_ms) WHERE ended_at_ms IS NULL;

-- Every call released under break-glass waits here for another person's word.
CREATE TABLE override_reviews (
    call_id             TEXT    PRIMARY KEY REFERENCES tool_calls (id),
    break_glass_id      TEXT    NOT NULL REFERENCES break_glass (id),
    overridden_by       TEXT    NOT NULL,
    overridden_at_ms    INTEGER NOT NULL,
    acknowledged_by     TEXT,
    acknowledged_at_ms  INTEGER,
    verdict             TEXT    CHECK (verdict IN ('agree', 'flag')),
    note                TEXT
) STRICT;

CREATE INDEX override_reviews_awaiting ON override_reviews (overridden_at_ms) WHERE acknowledged_at_ms IS NULL;

-- Held calls that went unanswered past their escalation time (on-call was told once).
CREATE TABLE escalations (
    call_id         TEXT    PRIMARY KEY REFERENCES tool_calls (id),
    escalated_at_ms INTEGER NOT NULL
) STRICT;

-- One-time decision links from notifications: a nonce is spent when its confirm page
-- is submitted (the link only ever opens that page).
CREATE TABLE decision_links (
    nonce       TEXT    PRIMARY KEY,
    call_id     TEXT    NOT NULL,
    used_by     TEXT    NOT NULL,
    used_at_ms  INTEGER NOT NULL
) STRICT;

-- Notification channels added on the admin page (those in the configuration file are
-- not stored). Where a channel sends, and its signing secret, are sealed with a key
-- derived from the server key: a Slack webhook URL is itself a credential.
CREATE TABLE notification_channels (
    name            TEXT    PRIMARY KEY,
    kind            TEXT    NOT NULL CHECK (kind IN ('webhook', 'slack', 'email')),
    target          TEXT    NOT NULL,
    sealed          BLOB    NOT NULL,
    recipients      TEXT    NOT NULL,
    min_risk        TEXT    NOT NULL,
    events          TEXT    NOT NULL,
    created_by      TEXT    NOT NULL,
    created_at_ms   INTEGER NOT NULL
) STRICT;
