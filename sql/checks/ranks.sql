-- check: ranks
-- summary: Ranks and devices are consistent: a rank is claimed once per run, every row with a
--          rank names a rank that its own source holds, and so does every device with a rank.
-- inputs: _stored_rows (see _stored_rows.sql).
-- returns: one row per inconsistency.
SELECT format('run {}: rank {} is claimed {} times (file_ids {}) - re-ingest with --replace '
              '--rank-map FILE_GLOB=RANK', run_id, rank, count(*),
              string_agg(file_id::VARCHAR, ', ' ORDER BY file_id)) AS problem
FROM store.ranks GROUP BY run_id, rank HAVING count(*) > 1
UNION ALL
SELECT format('source {}: store.{} holds {} row(s) of rank {} in run {}, which is not a rank of '
              'that source in store.ranks - re-ingest it with --replace',
              e.file_id, e.table_name, sum(e.n), e.rank, e.run_id)
FROM _stored_rows e
WHERE e.rank IS NOT NULL AND e.table_name NOT IN ('ranks', 'devices')
  AND NOT EXISTS (SELECT 1 FROM store.ranks r
                  WHERE r.run_id = e.run_id AND r.rank = e.rank AND r.file_id = e.file_id)
GROUP BY e.table_name, e.file_id, e.run_id, e.rank
UNION ALL
SELECT format('source {}: store.devices gives device {} rank {}, which is not a rank of that '
              'source - re-ingest it with --replace', d.file_id, d.device_id, d.rank)
FROM store.devices d
WHERE d.rank IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM store.ranks r
                  WHERE r.run_id = d.run_id AND r.rank = d.rank AND r.file_id = d.file_id)
ORDER BY problem;
