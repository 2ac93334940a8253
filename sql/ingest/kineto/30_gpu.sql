-- GPU side: kernels, memcpy, memset (-> _kineto_kernels, _kineto_memcpy, _kineto_memset).
-- Device and stream come from args (present in every era; 2021 tids were strings such as
-- "stream 7"). A GPU op's iteration is its launching call's (by correlation id); without one,
-- the host step whose range holds the op's start.

CREATE OR REPLACE TEMP TABLE _gpu AS
WITH gpu AS (
    SELECT event_no, kind, name, pid, tid, tid_text, start_ns, start_ns + dur_ns AS end_ns, args,
           iteration,
           json_extract_string(args, ['$.device', '$.stream', '$.context', '$.correlation',
                                      '$."External id"', '$."external id"', '$.bytes']) AS a
    FROM _ev WHERE kind IN ('kernel', 'memcpy', 'memset')
)
SELECT g.event_no, g.kind, g.name, g.start_ns, g.end_ns, g.args,
       coalesce(TRY_CAST(g.a[1] AS INTEGER), CAST(g.pid AS INTEGER)) AS device_id,
       coalesce(TRY_CAST(g.a[2] AS BIGINT), g.tid,
                TRY_CAST(regexp_extract(g.tid_text, '([0-9]+)', 1) AS BIGINT)) AS stream_id,
       TRY_CAST(g.a[3] AS BIGINT) AS context_id,
       TRY_CAST(g.a[4] AS BIGINT) AS correlation_id,
       TRY_CAST(coalesce(g.a[5], g.a[6]) AS BIGINT) AS external_id,
       TRY_CAST(g.a[7] AS BIGINT) AS bytes,
       CASE WHEN l.correlation_id IS NOT NULL THEN l.iteration ELSE g.iteration END AS iteration,
       l.tid AS launch_tid, l.start_ns AS launch_ns
FROM gpu g
LEFT JOIN _launches l ON l.correlation_id = TRY_CAST(g.a[4] AS BIGINT);

-- The short name's regexes run once per distinct kernel name (tens), not once per kernel.
CREATE OR REPLACE TEMP TABLE _kineto_kernels AS
SELECT getvariable('host_pid') AS pid, device_id,
       context_id, stream_id, start_ns, end_ns, name, n.short_name,
       correlation_id, external_id,
       TRY_CAST(k[1] AS INTEGER) AS grid_x, TRY_CAST(k[2] AS INTEGER) AS grid_y,
       TRY_CAST(k[3] AS INTEGER) AS grid_z, TRY_CAST(k[4] AS INTEGER) AS block_x,
       TRY_CAST(k[5] AS INTEGER) AS block_y, TRY_CAST(k[6] AS INTEGER) AS block_z,
       TRY_CAST(k[7] AS INTEGER) AS registers_per_thread,
       TRY_CAST(k[8] AS BIGINT) AS shared_mem_bytes, iteration, launch_ns
FROM (SELECT *, json_extract_string(args, ['$.grid[0]', '$.grid[1]', '$.grid[2]', '$.block[0]',
                                           '$.block[1]', '$.block[2]', '$."registers per thread"',
                                           '$."shared memory"']) AS k
      FROM _gpu WHERE kind = 'kernel')
LEFT JOIN (SELECT name, kernel_short_name(name) AS short_name
           FROM (SELECT DISTINCT name FROM _gpu WHERE kind = 'kernel')) n USING (name);

-- 'Memcpy HtoD (Pinned -> Device)', 'Memset (Device)'
CREATE OR REPLACE TEMP TABLE _kineto_memcpy AS
SELECT getvariable('host_pid') AS pid, device_id,
       context_id, stream_id, start_ns, end_ns, correlation_id, external_id, bytes,
       nullif(regexp_extract(name, '^Memcpy ([A-Za-z]+)', 1), '') AS copy_kind,
       nullif(regexp_extract(name, '\(([A-Za-z ]+) -> ', 1), '') AS src_kind,
       nullif(regexp_extract(name, ' -> ([A-Za-z ]+)\)', 1), '') AS dst_kind,
       iteration, launch_ns
FROM _gpu WHERE kind = 'memcpy';

CREATE OR REPLACE TEMP TABLE _kineto_memset AS
SELECT getvariable('host_pid') AS pid, device_id,
       context_id, stream_id, start_ns, end_ns, correlation_id, external_id, bytes,
       nullif(regexp_extract(name, '^Memset \(([A-Za-z ]+)\)', 1), '') AS mem_kind, iteration,
       launch_ns
FROM _gpu WHERE kind = 'memset';
