-- uses: none
-- Timer lines of training logs (tracewh ingest --log): DeepSpeed wall_clock_breakdown
-- `time (ms) | fwd_microstep: 1857.15 | ...` or a --log-pattern's timers, one row per timer and
-- line. DeepSpeed prints each step twice, as `fwd_microstep` and as `fwd`: both are kept, each
-- numbered on its own.
CREATE OR REPLACE VIEW log_timers AS
SELECT
    run_id,
    line_rank AS rank,  -- the line's [Rank N]; NULL when it names none
    file_id,
    line_no,            -- 1-based line of the log
    ts_ns,              -- the line's time stamp, UTC epoch ns; NULL without one
    step,               -- the n-th line of this timer on this rank, in file order (or the pattern's step)
    name AS timer,      -- as printed: fwd_microstep, bwd_allreduce, step, ...
    value AS ms
FROM store.log_values
WHERE kind = 'timer';
