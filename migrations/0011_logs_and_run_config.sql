-- 0011: training logs (timer, iteration and memory lines) and run configuration values.

-- One number read from a training log: a timer of a `time (ms) | ...` line, a field of an
-- iteration line, or a measure of a `memory (MB) | ...` line; stored long, one row per number.
CREATE TABLE store.log_values (
    run_id    VARCHAR NOT NULL,
    file_id   BIGINT NOT NULL,
    line_no   INTEGER NOT NULL,   -- 1-based line of the log
    line_rank INTEGER,            -- `[Rank N]` of the line; not a store.ranks rank (a log holds no process)
    ts_ns     BIGINT,             -- the line's time stamp, UTC epoch ns; NULL without one
    kind      VARCHAR NOT NULL,   -- timer | iteration | memory
    step      INTEGER,            -- timer: n-th line of this timer on this rank; else the iteration
    name      VARCHAR NOT NULL,   -- timer or field name, e.g. fwd_microstep, elapsed_time_per_iteration_ms
    value     DOUBLE
);

-- One configuration value of a run (tp=4, zero_stage=2, ratio=0.5, ...) and where it came from;
-- the runs view keeps, per key, the value of the most trusted source.
CREATE TABLE store.run_params (
    run_id  VARCHAR NOT NULL,
    file_id BIGINT NOT NULL,      -- the file whose ingest gave it
    key     VARCHAR NOT NULL,
    value   VARCHAR,
    source  VARCHAR NOT NULL      -- run-param | card | ds_config | megatron-args | name-template
);
