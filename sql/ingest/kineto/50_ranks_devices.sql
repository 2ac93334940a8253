-- The process this file holds -> _kineto_ranks (store.ranks; its rank is the writer's to give);
-- the GPUs its kernels ran on -> _kineto_devices (store.devices), with their deviceProperties
-- (which list every GPU of the node, used or not).
-- Variables: world_size, backend, host, device_properties (JSON array).

CREATE OR REPLACE TEMP TABLE _kineto_ranks AS
SELECT getvariable('host_pid') AS pid,
       getvariable('host_pid') AS process_key, getvariable('host') AS host,
       (SELECT mode(device_id) FROM _gpu WHERE kind = 'kernel') AS device_id,
       getvariable('world_size') AS world_size, getvariable('backend') AS backend;

CREATE OR REPLACE TEMP TABLE _kineto_devices AS
WITH used AS (SELECT DISTINCT device_id FROM _gpu WHERE device_id IS NOT NULL),
props AS (
    SELECT unnest(json_extract(coalesce(getvariable('device_properties'), '[]'), '$[*]')) AS p
),
-- a GPU whose id is not in the list (an MI300X virtual function: the ops on device 2, the list
-- numbering the visible GPUs from 0) is the list's GPU when the list names one kind only
one_kind AS (
    SELECT min(CAST(p AS VARCHAR)) AS p FROM props HAVING count(DISTINCT p ->> 'name') = 1
),
matched AS (
    SELECT u.device_id, CAST(coalesce(CAST(x.p AS VARCHAR), o.p) AS JSON) AS p
    FROM used u
    LEFT JOIN props x ON TRY_CAST(x.p ->> 'id' AS INTEGER) = u.device_id
    LEFT JOIN one_kind o ON true
)
SELECT device_id,
       p ->> 'name' AS name, TRY_CAST(p ->> 'numSms' AS INTEGER) AS sm_count,
       TRY_CAST(p ->> 'totalGlobalMem' AS BIGINT) AS total_memory,
       (p ->> 'computeMajor') || '.' || (p ->> 'computeMinor') AS compute_capability
FROM matched;
