-- The chain keeps no index but its sequence numbers: every index entry was written for
-- every event (call ids and session ids). Timelines find a session's or trace's events
-- through the search index (`audit::index`, its own file, written off the ingest path)
-- and read them from the chain by sequence number.
DROP INDEX IF EXISTS audit_events_call;
DROP INDEX IF EXISTS audit_events_session;
