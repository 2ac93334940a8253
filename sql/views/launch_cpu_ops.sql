-- uses: cpu_ops, gpu_op_calls, op_shapes_recorded, range_nesting
-- Each launch call's CPU op, for sources with CPU ops (Kineto): the op with the call's External
-- id that encloses the call on its thread, the deepest of several; else the innermost op open
-- on the thread at the call's start ("open at" as range_nesting: a call starting when an op
-- starts is inside it, one starting when it ends is not). gpu_op_launches.cpu_op_id is this
-- link; op_summary reads it alone. The calls no op claims by External id are points (ids below
-- 0) among the CPU ops of their threads, and range_nesting gives each its innermost op as
-- parent; only those threads are swept. Calls with no op around them have no row.

-- launch_cpu_ops_of: the link for the sources first_file_id to last_file_id (NULL: open), as
-- ingest makes store.shaped_ops one source at a time (sql/op_shapes_add.sql); shaped_only: only
-- for the sources whose trace recorded shapes (op_shapes_recorded; op_kernels), so that
-- a warehouse without shapes pays nothing for it.
CREATE OR REPLACE MACRO launch_cpu_ops_of(first_file_id, last_file_id, shaped_only) AS TABLE
WITH calls AS (  -- the launching calls of those sources, one row each (a graph launch runs
                 -- several ops)
    SELECT DISTINCT api_id, file_id, pid, correlation_id, launch_tid AS tid, launch_ns AS start_ns,
           launch_end_ns AS end_ns, api_name AS name, api_external_id AS external_id
    FROM gpu_op_calls
    WHERE file_id IN (SELECT file_id FROM cpu_ops)
      AND (first_file_id IS NULL OR file_id >= first_file_id)
      AND (last_file_id IS NULL OR file_id <= last_file_id)
      AND (NOT shaped_only OR file_id IN (SELECT file_id FROM op_shapes_recorded WHERE shapes_recorded))
), by_external_id AS MATERIALIZED (
    SELECT l.api_id, arg_max(o.op_id, o.depth) AS cpu_op_id
    FROM calls l
    JOIN cpu_ops o ON o.file_id = l.file_id AND o.external_id = l.external_id
                        AND o.tid = l.tid AND o.start_ns <= l.start_ns AND l.start_ns < o.end_ns
    GROUP BY l.api_id
), by_time AS (
    SELECT * FROM calls l ANTI JOIN by_external_id e USING (api_id)
), points AS (
    SELECT o.op_id AS range_id, o.file_id * 4294967296 + coalesce(o.pid, 0) AS pid, o.tid,
           o.start_ns, o.end_ns
    FROM cpu_ops o
    SEMI JOIN by_time l ON l.file_id = o.file_id AND l.pid IS NOT DISTINCT FROM o.pid
                       AND l.tid IS NOT DISTINCT FROM o.tid
    UNION ALL
    SELECT -1 - api_id, file_id * 4294967296 + coalesce(pid, 0), tid, start_ns, start_ns
    FROM by_time
)
SELECT api_id,     -- the launching call (gpu_op_calls.api_id)
       cpu_op_id   -- cpu_ops.op_id
FROM by_external_id
UNION ALL
SELECT -1 - range_id, parent_id FROM range_nesting('points') WHERE range_id < 0 AND parent_id IS NOT NULL;

CREATE OR REPLACE VIEW launch_cpu_ops AS
SELECT * FROM launch_cpu_ops_of(NULL, NULL, false);
