-- uses: scope
-- One row per rank (process) of a run, and where its rank number came from.
CREATE OR REPLACE VIEW ranks AS
SELECT
    k.run_id,
    k.rank,         -- global rank
    rank_key(k.file_id, k.rank) AS rank_key,  -- one BIGINT per (run_id, rank), as in gpu_ops
    k.file_id,
    k.pid,          -- OS process id
    k.host,
    k.device_id,    -- GPU its kernels ran on
    coalesce(k.world_size, count(*) OVER (PARTITION BY k.run_id)) AS world_size,
    k.backend,      -- nccl, gloo, ...
    k.rank_source   -- rank-map | nccl | mpi | env | distributedInfo | filename | process-order | default
FROM store.ranks k;
