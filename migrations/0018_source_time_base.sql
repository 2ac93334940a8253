-- 0018: store.sources.time_base (issue 34): how each file's times became UTC epoch ns, in words
-- ("session start + session-relative ns", "UTC ns as exported (--ts-normalize)",
-- "baseTimeNanoseconds + ts", ...). Files ingested before are NULL: their base was not recorded.
ALTER TABLE store.sources ADD COLUMN time_base VARCHAR;
