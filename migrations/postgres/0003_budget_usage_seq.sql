-- Each budget row carries the audit chain position of the batch that last wrote it, so a
-- writer that finds the chain moved by another reads back only the rows that one changed.
ALTER TABLE budget_usage ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX budget_usage_seq ON budget_usage (seq);
