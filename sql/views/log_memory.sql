-- uses: none
-- DeepSpeed memory lines of training logs, `[Rank 0] (after 1 iterations) memory (MB) |
-- allocated: 18244.64 | max allocated: 41299.50 | reserved: 46764.0 | max reserved: 46764.0`,
-- one row per measure and line.
CREATE OR REPLACE VIEW log_memory AS
SELECT
    run_id,
    line_rank AS rank,  -- the line's [Rank N]; NULL when it names none
    file_id,
    line_no,
    ts_ns,              -- the line's time stamp, UTC epoch ns; NULL without one
    step AS iteration,  -- the N of '(after N iterations)'
    name AS measure,    -- allocated, max_allocated, reserved, max_reserved
    value AS mb
FROM store.log_values
WHERE kind = 'memory';
