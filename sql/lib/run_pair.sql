-- uses: ranks
-- run_pair(base, test): the two runs a diff compares, as rows (side, run_id) with side 'base'
-- (the run before) and 'test' (the run after). base: the run given, else the first run by
-- run_id; test: the run given, else the first run after base. A metric passes its parameters:
-- FROM run_pair(getvariable('base'), getvariable('test')).
CREATE OR REPLACE MACRO run_pair(base, test) AS TABLE
SELECT 'base' AS side, coalesce(CAST(base AS VARCHAR), (SELECT min(run_id) FROM ranks)) AS run_id
UNION ALL
SELECT 'test',
       coalesce(CAST(test AS VARCHAR),
                (SELECT min(run_id) FROM ranks
                 WHERE run_id > coalesce(CAST(base AS VARCHAR), (SELECT min(run_id) FROM ranks))));
