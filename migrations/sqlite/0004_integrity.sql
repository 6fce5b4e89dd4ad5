-- Decision integrity: a modified call is judged again on every layer, including
-- per-turn budgets, so the turn is kept with the call.
ALTER TABLE tool_calls ADD COLUMN turn_id TEXT;

