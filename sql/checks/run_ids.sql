-- check: run_ids
-- summary: Runs and sources agree: every source's run is in store.runs once, every run has a
--          source, and every stored row carries the run of its source.
-- inputs: _stored_rows (see _stored_rows.sql).
-- returns: one row per disagreement.
SELECT format('source {} ({}) belongs to run {}, which store.runs lacks - re-ingest it with '
              '--replace', s.file_id, s.path, s.run_id) AS problem
FROM store.sources s ANTI JOIN store.runs r USING (run_id)
UNION ALL
SELECT format('run {} has no source - delete it in ''tracewh shell --write'' '
              '(DELETE FROM store.runs WHERE run_id = ''{}'')', r.run_id, r.run_id)
FROM store.runs r ANTI JOIN store.sources s USING (run_id)
UNION ALL
SELECT format('run {} appears {} times in store.runs - rebuild the warehouse', run_id, count(*))
FROM store.runs GROUP BY run_id HAVING count(*) > 1
UNION ALL
SELECT format('store.{} holds {} row(s) of source {} under run {}, but the source is in run {} - '
              're-ingest it with --replace', x.table_name, sum(x.n), x.file_id, x.run_id, s.run_id)
FROM _stored_rows x JOIN store.sources s USING (file_id)
WHERE x.run_id IS DISTINCT FROM s.run_id
GROUP BY x.table_name, x.file_id, x.run_id, s.run_id
ORDER BY problem;
