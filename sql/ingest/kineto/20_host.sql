-- Host side: CUDA runtime/driver calls -> store.cuda_api, framework ops -> store.cpu_ops,
-- user annotations (and their GPU-stream copies) -> store.nvtx_ranges (domain 'torch').
-- Each gets the iteration whose host ProfilerStep range holds its start.
-- Out: temp table _launches (correlation_id, tid, start_ns, iteration) for the GPU side.

CREATE OR REPLACE TEMP TABLE _host AS
SELECT e.*,
       TRY_CAST(e.tid AS BIGINT) AS tid_num,
       TRY_CAST(json_extract_string(e.args, '$.correlation') AS BIGINT) AS correlation_id,
       TRY_CAST(coalesce(json_extract_string(e.args, '$."External id"'),
                         json_extract_string(e.args, '$."external id"')) AS BIGINT) AS external_id,
       (SELECT max(i.iteration) FROM _iterations i
        WHERE e.start_ns >= i.start_ns AND e.start_ns < i.end_ns) AS iteration
FROM _ev e
WHERE e.kind IN ('runtime', 'driver', 'cpu_op', 'annotation');

INSERT INTO store.cuda_api BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('host_pid') AS pid, tid_num AS tid,
       start_ns, start_ns + dur_ns AS end_ns, name,
       CASE kind WHEN 'driver' THEN 'driver' ELSE 'runtime' END AS api_kind,
       correlation_id, external_id, iteration
FROM _host WHERE kind IN ('runtime', 'driver');

INSERT INTO store.cpu_ops BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('host_pid') AS pid, tid_num AS tid,
       start_ns, start_ns + dur_ns AS end_ns, name, cat AS category, correlation_id,
       external_id, args, iteration
FROM _host WHERE kind = 'cpu_op';

CREATE OR REPLACE TEMP TABLE _nvtx AS
SELECT event_no AS range_id, TRY_CAST(pid AS BIGINT) AS pid, tid_num AS tid, start_ns,
       start_ns + dur_ns AS end_ns, name, 'annotation' AS kind, external_id
FROM _host WHERE kind = 'annotation'
UNION ALL
SELECT event_no, TRY_CAST(pid AS BIGINT),
       coalesce(TRY_CAST(json_extract_string(args, '$.stream') AS BIGINT), TRY_CAST(tid AS BIGINT)),
       start_ns, start_ns + dur_ns, name, 'gpu_annotation',
       TRY_CAST(json_extract_string(args, '$."External id"') AS BIGINT)
FROM _ev WHERE kind = 'gpu_annotation';

INSERT INTO store.nvtx_ranges BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, n.range_id, n.pid, n.tid, n.start_ns, n.end_ns,
       'torch' AS domain, n.name, n.kind, nest.depth, nest.parent_id, n.external_id
FROM _nvtx n
LEFT JOIN range_nesting('_nvtx') nest USING (range_id);

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT correlation_id, arg_min(tid_num, start_ns) AS tid, min(start_ns) AS start_ns,
       arg_min(iteration, start_ns) AS iteration
FROM _host
WHERE kind IN ('runtime', 'driver') AND correlation_id IS NOT NULL
GROUP BY correlation_id;
