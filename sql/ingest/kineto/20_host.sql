-- Host side: CUDA runtime/driver calls (store.cuda_api), user annotations and their GPU-stream
-- copies (store.nvtx_ranges, domain 'torch'); the framework ops are 22_cpu_op_tree.sql's.
-- Each gets the iteration whose host ProfilerStep range holds its start (_ev.iteration).
-- Out: _kineto_cuda_api, _kineto_nvtx_ranges; temp table _launches
-- (correlation_id, tid, start_ns, iteration) for the GPU side.

CREATE OR REPLACE TEMP TABLE _kineto_cuda_api AS
SELECT getvariable('host_pid') AS pid,
       e.tid, e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.name,
       CASE e.kind WHEN 'driver' THEN 'driver' ELSE 'runtime' END AS api_kind,
       TRY_CAST(e.ids[1] AS BIGINT) AS correlation_id,
       TRY_CAST(coalesce(e.ids[2], e.ids[3]) AS BIGINT) AS external_id, e.iteration
FROM (SELECT *, json_extract_string(args, ['$.correlation', '$."External id"', '$."external id"']) AS ids
      FROM _ev WHERE kind IN ('runtime', 'driver')) e;

CREATE OR REPLACE TEMP TABLE _launches AS
SELECT correlation_id, arg_min(tid, start_ns) AS tid, min(start_ns) AS start_ns,
       arg_min(iteration, start_ns) AS iteration
FROM _kineto_cuda_api
WHERE correlation_id IS NOT NULL
GROUP BY correlation_id;

CREATE OR REPLACE TEMP TABLE _nvtx AS
SELECT event_no AS range_id,
       CASE kind WHEN 'annotation' THEN getvariable('host_pid') ELSE pid END AS pid,
       CASE kind WHEN 'annotation' THEN tid
            ELSE coalesce(TRY_CAST(json_extract_string(args, '$.stream') AS BIGINT),
                          tid, TRY_CAST(regexp_extract(tid_text, '([0-9]+)', 1) AS BIGINT)) END AS tid,
       start_ns, start_ns + dur_ns AS end_ns, name, kind,
       TRY_CAST(coalesce(json_extract_string(args, '$."External id"'),
                         json_extract_string(args, '$."external id"')) AS BIGINT) AS external_id
FROM _ev WHERE kind IN ('annotation', 'gpu_annotation');

CREATE OR REPLACE TEMP TABLE _kineto_nvtx_ranges AS
SELECT n.range_id, n.pid, n.tid, n.start_ns, n.end_ns,
       'torch' AS domain, n.name, n.kind, nest.depth, nest.parent_id, n.external_id
FROM _nvtx n
LEFT JOIN range_nesting('_nvtx') nest USING (range_id);
