-- The dashboard's language each person chose (NULL: from their browser).
ALTER TABLE users ADD COLUMN locale TEXT CHECK (locale IN ('en', 'zh-CN'));
