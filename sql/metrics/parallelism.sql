-- metric: parallelism
-- version: 2
-- summary: How each run is parallelised (DDP, ZeRO-1/2/3, FSDP, tensor, pipeline, expert), read from the collectives per process group, with the evidence
-- unit: calls
-- grain: run_id, process_group, collective
-- columns: run_id VARCHAR, process_group VARCHAR, pg_desc VARCHAR, ranks VARCHAR, group_size BIGINT, collective VARCHAR, calls_per_iteration DOUBLE, forward_per_iteration DOUBLE, backward_per_iteration DOUBLE, optimizer_per_iteration DOUBLE, median_bytes DOUBLE, pattern VARCHAR, evidence VARCHAR
-- params: run (text, optional)
-- uses: parallel_groups, scope
-- complexity: O(n log n) in NCCL ops and phase ranges (parallel_groups: phase of a launch by ASOF join on merged phase stretches)
-- see: DeepSpeed ZeRO, PyTorch FSDP, Megatron-LM TP/PP, MoE expert parallelism
-- show: process_group, collective, pattern, ranks, group_size, calls_per_iteration, evidence, run_id
--
-- One row per run, process group and collective (parallel_groups): the group's ranks, calls per
-- rank and iteration in forward, backward and the optimizer step (the phase range enclosing the
-- launching CUDA call), the median size, the pattern matched and the evidence as a sentence.
-- The rules and their order are documented in sql/views/parallel_groups.sql. Traces that name
-- no process group (older PyTorch, nsys) put all of a run's collectives of a kind in one row.
SELECT
    run_id,
    process_group,
    pg_desc,
    ranks,
    group_size,
    collective,
    calls_per_iteration,
    forward_per_iteration,
    backward_per_iteration,
    optimizer_per_iteration,
    median_bytes,
    pattern,     -- DDP / ZeRO-1, ZeRO-2, FSDP / ZeRO-3, tensor parallel, pipeline parallel, expert parallel, unclassified
    evidence
FROM parallel_groups
WHERE run_match(run_id, getvariable('run'))
ORDER BY run_id, process_group, collective;
