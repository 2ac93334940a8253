-- The writer's step for one Kineto trace: the rows 10..60 staged in the temp tables (and view)
-- _kineto_<t> go into store.<t>, inside the file's transaction, under the file_id and rank the
-- writer gave the file. Variables: run_id, rank, rank_source, file_id.
-- The query writes one INSERT per staged table from DuckDB's catalog (tracewh.store runs each
-- statement it returns; the DuckDB shell lists them): a new stored table needs no edit here.
-- Each stored column takes, in this order: the variable of its name (run_id, rank,
-- rank_source, file_id); the staged column of its name; for <x>_id, the file's own number
-- <x>_no made an id that stays stable across `tracewh remove` (migrations/0015):
-- file_id * 2^32 + <x>_no. A staged column or table that fills nothing is a mistake in the
-- mapping, and stops the ingest.
WITH staged AS (
    SELECT table_name[9:] AS t, column_name AS c
    FROM duckdb_columns()
    WHERE database_name = 'temp' AND starts_with(table_name, '_kineto_')
),
stored AS (
    SELECT table_name AS t, column_name AS c, column_index AS i
    FROM duckdb_columns()
    WHERE database_name = current_database() AND schema_name = 'store'
      AND table_name IN (SELECT t FROM staged)
),
filled AS (
    SELECT s.t, s.i, s.c,
           CASE WHEN s.c IN ('run_id', 'rank', 'rank_source', 'file_id')
                    THEN format('getvariable(''{}'')', s.c)
                WHEN same.c IS NOT NULL THEN format('"{}"', s.c)
                WHEN number.c IS NOT NULL
                    THEN format('getvariable(''file_id'') * 4294967296 + "{}"', number.c)
           END AS value,
           coalesce(same.c, number.c) AS staged_column
    FROM stored s
    LEFT JOIN staged same ON same.t = s.t AND same.c = s.c
    LEFT JOIN staged number ON number.t = s.t AND ends_with(s.c, '_id')
                           AND number.c = s.c[:-4] || '_no'
),
inserts AS (
    SELECT format('INSERT INTO store."{}" ({}) SELECT {} FROM temp."_kineto_{}"', t,
                  string_agg(format('"{}"', c), ', ' ORDER BY i),
                  string_agg(value, ', ' ORDER BY i), t) AS statement
    FROM filled
    WHERE value IS NOT NULL
    GROUP BY t
),
unplaced AS (
    SELECT format('SELECT error(''staged column _kineto_{}.{} fills no column of store.{}'')',
                  t, c, t) AS statement
    FROM staged
    WHERE (t, c) NOT IN (SELECT (t, staged_column) FROM filled WHERE staged_column IS NOT NULL)
)
SELECT statement FROM unplaced
UNION ALL
SELECT statement FROM inserts;
