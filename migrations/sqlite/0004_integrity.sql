-- Decision integrity: a modified call is judged again on every layer, including
-- per-turn budgets, so the turn is kept with the call.
ALTER TABLE tool_calls ADD COLUMN turn_id TEXT;


-- Addresses a URL guard resolved and checked (`resolve = true`), as the agent is told
-- them so its executor can pin them; NULL when nothing was resolved (the usual case).
ALTER TABLE tool_calls ADD COLUMN pinned TEXT;
