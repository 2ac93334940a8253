-- 0005: every GPU op keeps the start of the CUDA API call that launched it (launch_ns, UTC ns;
-- NULL when the call is not in the trace). Ingest links an op to its call once, on the
-- correlation id within the process; metrics that ask "was the GPU waiting for the host?"
-- (idle_gaps) then read a column instead of joining millions of ops to millions of calls.
-- Rows stored before this migration get the same link from store.cuda_api.
ALTER TABLE store.kernels ADD COLUMN launch_ns BIGINT;
ALTER TABLE store.memcpy ADD COLUMN launch_ns BIGINT;
ALTER TABLE store.memset ADD COLUMN launch_ns BIGINT;

CREATE TEMP TABLE _launch_calls AS
SELECT file_id, pid, correlation_id, min(start_ns) AS launch_ns
FROM store.cuda_api
WHERE correlation_id IS NOT NULL
GROUP BY file_id, pid, correlation_id;

UPDATE store.kernels AS o SET launch_ns = c.launch_ns FROM _launch_calls c
WHERE c.file_id = o.file_id AND c.pid = o.pid AND c.correlation_id = o.correlation_id;
UPDATE store.memcpy AS o SET launch_ns = c.launch_ns FROM _launch_calls c
WHERE c.file_id = o.file_id AND c.pid = o.pid AND c.correlation_id = o.correlation_id;
UPDATE store.memset AS o SET launch_ns = c.launch_ns FROM _launch_calls c
WHERE c.file_id = o.file_id AND c.pid = o.pid AND c.correlation_id = o.correlation_id;

DROP TABLE _launch_calls;
