-- uses: none
-- Iteration lines of training logs (Megatron-LM, Megatron-DeepSpeed), one row per line, in both
-- forms: ` iteration        1/  317892 | consumed samples:            8 | ...` and
-- `iteration=       2/  317892 | consumed_samples=         512 | ...`. Field names are made
-- alike (lower case, words joined by '_': 'elapsed time per iteration (ms)' and
-- 'elapsed_time_per_iteration_ms' both give elapsed_time_per_iteration_ms); every field is in
-- `fields`, the usual ones also as columns. A pair `32208.7/32208.7` (Megatron-Core, Primus:
-- this iteration / the running average) gives the field and `<field>_avg`.
CREATE OR REPLACE VIEW log_iterations AS
SELECT
    run_id,
    line_rank AS rank,  -- the line's [Rank N]; NULL when it names none
    file_id,
    line_no,
    any_value(ts_ns) AS ts_ns,  -- the line's time stamp, UTC epoch ns; NULL without one
    step AS iteration,
    CAST(any_value(value) FILTER (WHERE name = 'train_iterations') AS BIGINT) AS train_iterations,
    any_value(value) FILTER (WHERE name = 'elapsed_time_per_iteration_ms') AS elapsed_ms,
    CAST(any_value(value) FILTER (WHERE name = 'consumed_samples') AS BIGINT) AS consumed_samples,
    CAST(any_value(value) FILTER (WHERE name = 'consumed_tokens') AS BIGINT) AS consumed_tokens,
    CAST(any_value(value) FILTER (WHERE name = 'global_batch_size') AS BIGINT) AS global_batch,
    any_value(value) FILTER (WHERE name = 'learning_rate') AS learning_rate,
    any_value(value) FILTER (WHERE name = 'lm_loss') AS lm_loss,
    any_value(value) FILTER (WHERE name = 'loss_scale') AS loss_scale,
    any_value(value) FILTER (WHERE name = 'samples_per_second') AS samples_per_second,
    coalesce(any_value(value) FILTER (WHERE name = 'tflops'),   -- TFLOPs, else Megatron-DeepSpeed's [LM]TFLOPs
             any_value(value) FILTER (WHERE name = 'lm_tflops'),   -- or Megatron-Core's per GPU
             any_value(value) FILTER (WHERE name = 'throughput_per_gpu_tflop_s_gpu')) AS tflops,
    map_from_entries(list((name, value) ORDER BY name)) AS fields  -- every field of the line
FROM store.log_values
WHERE kind = 'iteration'
GROUP BY run_id, line_rank, file_id, line_no, step;
