-- uses: none
-- One row per memory copy on the GPU.
CREATE OR REPLACE VIEW memcpy AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    device_id,
    stream_id,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    bytes,
    copy_kind,        -- HtoD, DtoH, DtoD, HtoH, PtoP, ...
    src_kind,         -- Pageable, Pinned, Device, ...
    dst_kind,
    correlation_id,
    external_id,
    iteration,
    launch_ns         -- start of the CUDA API call that launched it, UTC ns (NULL: not in the trace)
FROM store.memcpy;
