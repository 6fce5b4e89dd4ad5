-- A call's status is checked by comparisons instead of an IN list. SQLite checks a list
-- of more than two values by building a temporary index of them, and a CHECK does that
-- again for every row written: for each call the ledger stores, a B-tree created, ten
-- values inserted and the tree dropped, half of the insert's instructions
-- (docs/performance.md, machine Q). Both forms accept exactly the same values.
--
-- Changing a CHECK needs no rebuild of the table: SQLite's documented way ("ALTER TABLE",
-- making other kinds of table schema changes) is to edit the table's definition in
-- sqlite_schema, which every row already satisfies, and to change the schema's version
-- so that other connections read it again (the CREATE and DROP below do that).
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql,
    'CHECK (status IN (''allowed'', ''denied'', ''pending'', ''approved'',
                            ''modified'', ''rejected'', ''skipped'', ''expired'', ''cancelled'', ''overridden''))',
    'CHECK (status = ''allowed'' OR status = ''denied'' OR status = ''pending''
                            OR status = ''approved'' OR status = ''modified'' OR status = ''rejected''
                            OR status = ''skipped'' OR status = ''expired'' OR status = ''cancelled''
                            OR status = ''overridden'')')
WHERE type = 'table' AND name = 'tool_calls';
PRAGMA writable_schema = OFF;
CREATE TABLE schema_version_bump (x);
DROP TABLE schema_version_bump;
