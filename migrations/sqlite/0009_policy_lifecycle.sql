-- Policy lifecycle: every version's text is kept (content-addressed by its version hash),
-- and every change of the policy in force is a row: which version, the one before, who,
-- how (start, cli, signal, page, rollback) and when. Versions proposed for a replay are
-- stored the same way, without a change.

ALTER TABLE policy_versions ADD COLUMN name TEXT;
ALTER TABLE policy_versions ADD COLUMN source TEXT;

CREATE TABLE policy_changes (
    id              INTEGER PRIMARY KEY,
    version_id      INTEGER NOT NULL REFERENCES policy_versions (id),
    previous_id     INTEGER REFERENCES policy_versions (id),
    actor           TEXT    NOT NULL,
    via             TEXT    NOT NULL CHECK (via IN ('start', 'cli', 'signal', 'page', 'rollback')),
    note            TEXT,
    at_ms           INTEGER NOT NULL
) STRICT;

-- What the host answered when a call was judged (symlinks, sizes, DNS), so a replay under
-- another policy decides with the same facts and asks the machine nothing. Only when the
-- call asked anything, and never for calls whose arguments held a secret.
ALTER TABLE tool_calls ADD COLUMN facts TEXT;
