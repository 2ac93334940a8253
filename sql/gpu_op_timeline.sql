-- Each GPU op's place on its timeline, for the ops the sources just written brought
-- (variables first_file_id, last_file_id), written
-- into its stored row once at ingest (tracewh.ingest) so that metrics need not sort millions of
-- ops to find it:
--   alone               no other GPU op of the rank (any device, kernel, memcpy or memset)
--                       overlaps or touches it ([start_ns, end_ns] closed, as the interval
--                       macros count): the op is a busy island by itself
--   device_prev_end_ns  the latest end_ns among the device's ops before it in (start_ns, end_ns)
--                       order, ops with the same start and end not counted (NULL: none). When it
--                       is below start_ns the device was idle from it until the op started.
-- Both hold for any subset of a rank's ops and any cut of the timeline, which is what makes them
-- safe to read in metrics with filters. Ops with no valid interval (end before start, NULL
-- times) are never alone. Migration 0006 filled in the ops stored before it with the same rules.
CREATE OR REPLACE TEMP TABLE _gpu_op_timeline AS
WITH ops AS (
    SELECT 0 AS source_table, rowid AS row_id, file_id, rank, device_id, start_ns, end_ns
    FROM store.kernels WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
    UNION ALL
    SELECT 1, rowid, file_id, rank, device_id, start_ns, end_ns
    FROM store.memcpy WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
    UNION ALL
    SELECT 2, rowid, file_id, rank, device_id, start_ns, end_ns
    FROM store.memset WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
)
SELECT source_table, row_id,
       coalesce(max(end_ns) OVER rank_before < start_ns, true)
           AND coalesce(lead(start_ns) OVER rank_order > end_ns, true) AS alone,
       max(end_ns) OVER device_before AS device_prev_end_ns
FROM ops
WHERE start_ns IS NOT NULL AND end_ns >= start_ns
WINDOW rank_order AS (PARTITION BY file_id, rank ORDER BY start_ns, end_ns),
       rank_before AS (rank_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
       device_before AS (PARTITION BY file_id, rank, device_id ORDER BY start_ns, end_ns
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW EXCLUDE GROUP);

UPDATE store.kernels AS o SET alone = t.alone, device_prev_end_ns = t.device_prev_end_ns
FROM _gpu_op_timeline t WHERE t.source_table = 0 AND t.row_id = o.rowid;
UPDATE store.memcpy AS o SET alone = t.alone, device_prev_end_ns = t.device_prev_end_ns
FROM _gpu_op_timeline t WHERE t.source_table = 1 AND t.row_id = o.rowid;
UPDATE store.memset AS o SET alone = t.alone, device_prev_end_ns = t.device_prev_end_ns
FROM _gpu_op_timeline t WHERE t.source_table = 2 AND t.row_id = o.rowid;

DROP TABLE _gpu_op_timeline;
