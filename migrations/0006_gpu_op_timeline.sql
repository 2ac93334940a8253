-- 0006: every GPU op knows its place on the timeline (sql/gpu_op_timeline.sql says what the two
-- columns mean): whether it is alone among its rank's GPU ops, and where the device's earlier
-- ops ended. Ingest fills them in per source; on GPU timelines ~99% of ops are alone, and the
-- busy / idle / overlap metrics then sort only the rest. Rows stored before this migration get
-- them here, with the rules of that script as they were when this migration was written
-- (a migration is frozen once applied; the script may evolve).
ALTER TABLE store.kernels ADD COLUMN alone BOOLEAN;
ALTER TABLE store.kernels ADD COLUMN device_prev_end_ns BIGINT;
ALTER TABLE store.memcpy ADD COLUMN alone BOOLEAN;
ALTER TABLE store.memcpy ADD COLUMN device_prev_end_ns BIGINT;
ALTER TABLE store.memset ADD COLUMN alone BOOLEAN;
ALTER TABLE store.memset ADD COLUMN device_prev_end_ns BIGINT;

CREATE TEMP TABLE _gpu_op_timeline AS
WITH ops AS (
    SELECT 0 AS source_table, rowid AS row_id, file_id, rank, device_id, start_ns, end_ns
    FROM store.kernels
    UNION ALL
    SELECT 1, rowid, file_id, rank, device_id, start_ns, end_ns FROM store.memcpy
    UNION ALL
    SELECT 2, rowid, file_id, rank, device_id, start_ns, end_ns FROM store.memset
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
