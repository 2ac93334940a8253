-- uses: none
-- The name nsys (2022+) gives a copy in cuda_gpu_trace and cuda_gpu_mem_time_sum:
-- '[CUDA memcpy Host-to-Device]' for copy kind 'HtoD' (labels of ENUM_CUDA_MEMCPY_OPER).
CREATE OR REPLACE MACRO memcpy_name(copy_kind) AS
    '[CUDA memcpy ' || CASE copy_kind
        WHEN 'HtoD' THEN 'Host-to-Device' WHEN 'DtoH' THEN 'Device-to-Host'
        WHEN 'HtoA' THEN 'Host-to-Array' WHEN 'AtoH' THEN 'Array-to-Host'
        WHEN 'AtoA' THEN 'Array-to-Array' WHEN 'AtoD' THEN 'Array-to-Device'
        WHEN 'DtoA' THEN 'Device-to-Array' WHEN 'DtoD' THEN 'Device-to-Device'
        WHEN 'HtoH' THEN 'Host-to-Host' WHEN 'PtoP' THEN 'Peer-to-Peer'
        WHEN 'UVM HtoD' THEN 'Unified Host-to-Device' WHEN 'UVM DtoH' THEN 'Unified Device-to-Host'
        WHEN 'UVM DtoD' THEN 'Unified Device-to-Device'
        ELSE coalesce(copy_kind, 'Unknown') END || ']';
