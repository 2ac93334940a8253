-- GPU side: kernels, memcpy, memset. Device and stream come from args (present in every era;
-- 2021 tids were strings such as "stream 7"). A GPU op's iteration is its launching call's
-- (by correlation id); without one, the host step whose range holds the op's start.

CREATE OR REPLACE TEMP TABLE _gpu AS
SELECT e.event_no, e.kind, e.name, e.start_ns, e.start_ns + e.dur_ns AS end_ns, e.args,
       coalesce(TRY_CAST(json_extract_string(e.args, '$.device') AS INTEGER),
                TRY_CAST(e.pid AS INTEGER)) AS device_id,
       coalesce(TRY_CAST(json_extract_string(e.args, '$.stream') AS BIGINT),
                TRY_CAST(e.tid AS BIGINT),
                TRY_CAST(regexp_extract(e.tid, '([0-9]+)', 1) AS BIGINT)) AS stream_id,
       TRY_CAST(json_extract_string(e.args, '$.context') AS BIGINT) AS context_id,
       TRY_CAST(json_extract_string(e.args, '$.correlation') AS BIGINT) AS correlation_id,
       TRY_CAST(coalesce(json_extract_string(e.args, '$."External id"'),
                         json_extract_string(e.args, '$."external id"')) AS BIGINT) AS external_id,
       TRY_CAST(json_extract_string(e.args, '$.bytes') AS BIGINT) AS bytes
FROM _ev e
WHERE e.kind IN ('kernel', 'memcpy', 'memset');

CREATE OR REPLACE TEMP TABLE _gpu_iteration AS
SELECT g.event_no,
       coalesce(l.iteration, (
           SELECT max(i.iteration) FROM _iterations i
           WHERE l.correlation_id IS NULL AND g.start_ns >= i.start_ns AND g.start_ns < i.end_ns)
       ) AS iteration
FROM _gpu g LEFT JOIN _launches l USING (correlation_id);

INSERT INTO store.kernels BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('host_pid') AS pid, g.device_id,
       g.context_id, g.stream_id, g.start_ns, g.end_ns, g.name,
       kernel_short_name(g.name) AS short_name, g.correlation_id, g.external_id,
       TRY_CAST(json_extract_string(g.args, '$.grid[0]') AS INTEGER) AS grid_x,
       TRY_CAST(json_extract_string(g.args, '$.grid[1]') AS INTEGER) AS grid_y,
       TRY_CAST(json_extract_string(g.args, '$.grid[2]') AS INTEGER) AS grid_z,
       TRY_CAST(json_extract_string(g.args, '$.block[0]') AS INTEGER) AS block_x,
       TRY_CAST(json_extract_string(g.args, '$.block[1]') AS INTEGER) AS block_y,
       TRY_CAST(json_extract_string(g.args, '$.block[2]') AS INTEGER) AS block_z,
       TRY_CAST(json_extract_string(g.args, '$."registers per thread"') AS INTEGER) AS registers_per_thread,
       TRY_CAST(json_extract_string(g.args, '$."shared memory"') AS BIGINT) AS shared_mem_bytes,
       i.iteration
FROM _gpu g JOIN _gpu_iteration i USING (event_no)
WHERE g.kind = 'kernel';

-- 'Memcpy HtoD (Pinned -> Device)', 'Memset (Device)'
INSERT INTO store.memcpy BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('host_pid') AS pid, g.device_id,
       g.context_id, g.stream_id, g.start_ns, g.end_ns, g.correlation_id, g.external_id, g.bytes,
       nullif(regexp_extract(g.name, '^Memcpy ([A-Za-z]+)', 1), '') AS copy_kind,
       nullif(regexp_extract(g.name, '\(([A-Za-z ]+) -> ', 1), '') AS src_kind,
       nullif(regexp_extract(g.name, ' -> ([A-Za-z ]+)\)', 1), '') AS dst_kind,
       i.iteration
FROM _gpu g JOIN _gpu_iteration i USING (event_no)
WHERE g.kind = 'memcpy';

INSERT INTO store.memset BY NAME
SELECT getvariable('run_id') AS run_id, getvariable('rank') AS rank,
       getvariable('file_id') AS file_id, getvariable('host_pid') AS pid, g.device_id,
       g.context_id, g.stream_id, g.start_ns, g.end_ns, g.correlation_id, g.external_id, g.bytes,
       nullif(regexp_extract(g.name, '^Memset \(([A-Za-z ]+)\)', 1), '') AS mem_kind,
       i.iteration
FROM _gpu g JOIN _gpu_iteration i USING (event_no)
WHERE g.kind = 'memset';
