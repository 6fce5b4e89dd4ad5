-- The audit search index, derived from audit_events (server/src/audit/index.rs): the
-- facts auditors filter on, a one-line summary, and the event's redacted words as a
-- tsvector built by the server (server/src/audit/words.rs, the same words SQLite's FTS5
-- sees) under a GIN index. It can be emptied at any time: the server indexes the chain
-- again. Not append-only, not part of the record. UNLOGGED: derived data writes no WAL
-- (the ingest path's commits do not wait behind the index's WAL); after a crash
-- PostgreSQL empties both tables and the server indexes the chain again.
CREATE UNLOGGED TABLE search_events (
    seq      BIGINT   PRIMARY KEY,
    at_ms    BIGINT   NOT NULL,
    kind     TEXT     NOT NULL,
    actor    TEXT     NOT NULL,
    agent    TEXT,
    session  TEXT,
    trace    TEXT,
    call_id  TEXT,
    tool     TEXT,
    status   TEXT,
    layer    TEXT,
    rule     TEXT,
    source   TEXT,
    reviewer TEXT,
    summary  TEXT     NOT NULL,
    words    TSVECTOR NOT NULL
);
CREATE INDEX search_events_words ON search_events USING gin (words);
CREATE INDEX search_events_at ON search_events (at_ms, seq);
CREATE INDEX search_events_agent ON search_events (agent, seq) WHERE agent IS NOT NULL;
CREATE INDEX search_events_session ON search_events (session, seq) WHERE session IS NOT NULL;
CREATE INDEX search_events_trace ON search_events (trace, seq) WHERE trace IS NOT NULL;
CREATE INDEX search_events_tool ON search_events (tool, seq) WHERE tool IS NOT NULL;
CREATE INDEX search_events_status ON search_events (status, seq) WHERE status IS NOT NULL;
CREATE INDEX search_events_layer ON search_events (layer, seq) WHERE layer IS NOT NULL;
CREATE INDEX search_events_rule ON search_events (rule, seq) WHERE rule IS NOT NULL;
CREATE INDEX search_events_source ON search_events (source, seq) WHERE source IS NOT NULL;
CREATE INDEX search_events_reviewer ON search_events (reviewer, seq) WHERE reviewer IS NOT NULL;
CREATE INDEX search_events_kind ON search_events (kind, seq);
CREATE INDEX search_events_call ON search_events (call_id, seq) WHERE call_id IS NOT NULL;
CREATE UNLOGGED TABLE search_head (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    seq   BIGINT  NOT NULL,
    hash  BYTEA   NOT NULL
);
