-- uses: none
-- CUDA runtime and driver API calls on the host.
CREATE OR REPLACE VIEW cuda_api AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    name,             -- as nsys stats prints it: without a 4-character _vNNNN suffix (_v7000), with _v2, _v10000
    api_kind,         -- runtime | driver
    correlation_id,   -- links to kernels/memcpy/memset on (file_id, pid, correlation_id)
    external_id,      -- Kineto: the CPU op it ran under
    return_value,
    iteration
FROM store.cuda_api;
