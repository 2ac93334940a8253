-- uses: none
-- Training iterations per rank, from host ranges named ProfilerStep#N (or step/iteration N):
-- those whose stored iteration (iteration_number(name), sql/nvtx_range_facts.sql) is set.
-- First and last steps are flagged, not dropped: profilers often cut them short.
CREATE OR REPLACE VIEW iterations AS
WITH steps AS (
    SELECT run_id, rank, file_id, pid, tid, iteration, name, start_ns, end_ns
    FROM store.nvtx_ranges
    WHERE kind IN ('push_pop', 'start_end', 'annotation') AND iteration IS NOT NULL
)
SELECT
    run_id,
    rank,
    file_id,
    iteration,          -- the N of ProfilerStep#N
    name,
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    -- first_value in order, not min/max OVER the partition: DuckDB rewrites those into an
    -- aggregate joined back, which scans every NVTX range a second time
    iteration = first_value(iteration) OVER (w ORDER BY iteration) AS is_first,
    iteration = first_value(iteration) OVER (w ORDER BY iteration DESC) AS is_last,
    end_ns IS NULL AS is_partial  -- the range never ended inside the capture
FROM steps
WINDOW w AS (PARTITION BY run_id, rank);
