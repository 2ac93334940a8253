-- uses: gpu_op_kind, gpu_op_name, kernel_short_name
-- One row per GPU kernel execution. The kind comes from store.kernel_names: each distinct name
-- classified once by kernel_kind() (re-classified when the patterns change).
CREATE OR REPLACE VIEW kernels AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    device_id,
    stream_id,
    start_ns,                 -- UTC epoch ns
    end_ns,                   -- UTC epoch ns
    end_ns - start_ns AS dur_ns,
    coalesce(n.op_name, CAST(name AS gpu_op_name)) AS name, -- demangled name (ENUM gpu_op_name)
    -- base name; made again when stored empty (kernels in '(anonymous namespace)' before the fix)
    coalesce(nullif(short_name, ''), kernel_short_name(name)) AS short_name,
    n.kind, -- compute | comm | sync | other (store.kernel_names)
    correlation_id,           -- links to cuda_api on (file_id, pid, correlation_id)
    external_id,              -- Kineto: the CPU op that launched it (cpu_ops.external_id)
    grid_x, grid_y, grid_z,
    block_x, block_y, block_z,
    registers_per_thread,
    static_smem_bytes,
    dynamic_smem_bytes,
    shared_mem_bytes,         -- static + dynamic (Kineto reports only the total)
    graph_node_id,
    iteration,                -- iteration of the CPU call that launched it
    launch_ns                 -- start of that call, UTC ns (NULL: not in the trace)
FROM store.kernels
LEFT JOIN (SELECT name, CAST(kind AS gpu_op_kind) AS kind, CAST(name AS gpu_op_name) AS op_name
           FROM store.kernel_names) n
    USING (name);
