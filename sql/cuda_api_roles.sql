-- What the host-side metrics need to know of each CUDA API call of the sources first_file_id
-- to last_file_id (variables), stored once at ingest so that they need not join millions of
-- calls to the copies and to one another at every query (sql/lib/host_activity.sql reads them):
--   in_runtime_call  true: a driver call made inside a runtime call (the driver call under
--                    cudaLaunchKernel or cudaStreamSynchronize shares the runtime call's
--                    correlation id), left out so that a call is counted once (NULL: it is not)
--   blocking_rule    the rule by which the call waits for the GPU (blocking_calls): sync api,
--                    sync memcpy, sync memset or pageable memcpy (NULL: it does not wait)
-- Derive entry cuda_api_roles (tracewh.store.derive): a change here refills every source when
-- the warehouse is next opened for writing.
CREATE OR REPLACE TEMP TABLE _driver_calls_inside AS
WITH drivers AS (  -- driver calls are few; only they are looked up
    SELECT DISTINCT file_id, pid, correlation_id FROM store.cuda_api
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND api_kind = 'driver' AND correlation_id IS NOT NULL
)
SELECT DISTINCT d.file_id, d.pid, d.correlation_id
FROM store.cuda_api r
JOIN drivers d
  ON d.file_id = r.file_id AND d.pid = r.pid AND d.correlation_id = r.correlation_id
WHERE r.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
  AND r.api_kind = 'runtime';

UPDATE store.cuda_api AS a SET in_runtime_call = true
FROM _driver_calls_inside d
WHERE a.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
  AND a.api_kind = 'driver' AND d.file_id = a.file_id AND d.pid = a.pid
  AND d.correlation_id = a.correlation_id;
DROP TABLE _driver_calls_inside;

CREATE OR REPLACE TEMP TABLE _blocking_calls AS
WITH classes AS MATERIALIZED (  -- the regular expressions run per name, not per call
    SELECT name, api_class(name) AS class
    FROM (SELECT DISTINCT name FROM store.cuda_api
          WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id'))
),
copies AS (
    SELECT file_id, pid, correlation_id, launch_ns,
           CASE WHEN src_kind = 'Pageable' OR dst_kind = 'Pageable' THEN 'pageable memcpy' END AS pageable
    FROM store.memcpy
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND launch_ns IS NOT NULL
    UNION ALL
    SELECT file_id, pid, correlation_id, launch_ns, NULL FROM store.memset
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND launch_ns IS NOT NULL
),
few AS MATERIALIZED (
    -- the sync, memcpy and memset calls (not the millions of runtime launches)
    SELECT a.rowid AS row_id, a.file_id, a.pid, a.correlation_id, a.start_ns, a.name, n.class
    FROM store.cuda_api a
    JOIN classes n ON n.name = a.name
    WHERE a.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND n.class IN ('sync api', 'memcpy', 'memset') AND a.in_runtime_call IS NOT TRUE
)
SELECT row_id, rule FROM (
    SELECT a.row_id,
           CASE WHEN a.class = 'sync api' THEN 'sync api'
                WHEN c.launch_ns IS NULL THEN NULL   -- launched no copy or memset in the trace
                WHEN NOT contains(a.name, 'Async') THEN 'sync ' || a.class
                WHEN a.class = 'memcpy' THEN c.pageable END AS rule
    FROM few a
    LEFT JOIN (SELECT file_id, pid, correlation_id, launch_ns, any_value(pageable) AS pageable
               FROM copies GROUP BY ALL) c
           ON c.file_id = a.file_id AND c.pid = a.pid AND c.correlation_id = a.correlation_id
          AND c.launch_ns = a.start_ns)
WHERE rule IS NOT NULL;

UPDATE store.cuda_api AS a SET blocking_rule = b.rule
FROM _blocking_calls b
WHERE a.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
  AND b.row_id = a.rowid;
DROP TABLE _blocking_calls;
