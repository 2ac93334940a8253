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
    iteration,
    in_runtime_call,  -- true: a driver call made inside a runtime call (counted with it; NULL: not)
    blocking_rule     -- how the call waits for the GPU: sync api | sync memcpy | sync memset |
                      -- pageable memcpy (NULL: it does not wait; sql/cuda_api_roles.sql)
FROM store.cuda_api;
