-- uses: none
-- What NCCL kernel and API names say about a collective. Kernel names are only a hint (from
-- NCCL 2.19 the kernel is the nearest compiled specialisation, and one launch may carry a
-- group of collectives): prefer the NCCL NVTX range or the profiler's own arguments.
-- Naming eras: <=2.7 ncclAllReduceRingLLKernel_sum_f32; 2.8-2.18 ncclKernel_AllReduce_RING_LL_Sum_float;
-- >=2.19 ncclDevKernel_AllReduce_Sum_f32_RING_LL; >=2.27 ncclSymkDevKernel_*.
CREATE OR REPLACE MACRO nccl_collective_from_kernel(name) AS
    replace(coalesce(
        nullif(regexp_extract(name, '^(?:void )?nccl(?:Symk)?(?:Dev)?Kernel_(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|SendRecv|AllToAll|AlltoAll)', 1), ''),
        nullif(regexp_extract(name, '^(?:void )?nccl(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|SendRecv)(?:Ring|Tree|CollNet)?(?:LL128|LL)?Kernel', 1), '')),
        'AlltoAll', 'AllToAll');

CREATE OR REPLACE MACRO nccl_algorithm_from_kernel(name) AS
    upper(nullif(coalesce(
        nullif(regexp_extract(name, '_(TREE|RING|COLLNET_DIRECT|COLLNET_CHAIN|NVLS_TREE|NVLS|PAT)_(?:LL128|LL|SIMPLE)', 1), ''),
        regexp_extract(name, '^(?:void )?nccl[A-Za-z]+?(Ring|Tree|CollNet)(?:LL128|LL)?Kernel', 1)), ''));

CREATE OR REPLACE MACRO nccl_protocol_from_kernel(name) AS
    coalesce(
        nullif(regexp_extract(name, '_(?:TREE|RING|COLLNET_DIRECT|COLLNET_CHAIN|NVLS_TREE|NVLS|PAT)_(LL128|LL|SIMPLE)', 1), ''),
        CASE WHEN regexp_matches(name, '^(?:void )?nccl[A-Za-z]+(Ring|Tree|CollNet)?(LL128|LL)Kernel')
             THEN regexp_extract(name, '(LL128|LL)Kernel', 1)
             WHEN regexp_matches(name, '^(?:void )?nccl[A-Za-z]+Kernel_') AND NOT regexp_matches(name, '^(?:void )?nccl(Dev|Symk)')
             THEN 'SIMPLE' END);

-- NCCL API function name (NVTX range text) -> collective: ncclAllReduce -> AllReduce.
CREATE OR REPLACE MACRO nccl_collective_from_api(name) AS
    CASE name
        WHEN 'ncclAllReduce' THEN 'AllReduce' WHEN 'ncclAllGather' THEN 'AllGather'
        WHEN 'ncclReduceScatter' THEN 'ReduceScatter' WHEN 'ncclBroadcast' THEN 'Broadcast'
        WHEN 'ncclBcast' THEN 'Broadcast' WHEN 'ncclReduce' THEN 'Reduce'
        WHEN 'ncclSend' THEN 'Send' WHEN 'ncclRecv' THEN 'Recv'
        WHEN 'ncclAlltoAll' THEN 'AllToAll' WHEN 'ncclAllToAll' THEN 'AllToAll'
        WHEN 'ncclGather' THEN 'Gather' WHEN 'ncclScatter' THEN 'Scatter'
    END;

-- c10d / ProcessGroup names (record_param_comms "Collective name", nccl:* and gloo:* annotations,
-- c10d::* ops) -> collective: allreduce, nccl:all_reduce, c10d::allreduce_ -> AllReduce;
-- _allgather_base -> AllGather; all_to_allv -> AllToAll; ...
CREATE OR REPLACE MACRO nccl_collective_from_c10d(name) AS (
    WITH n AS (SELECT replace(lower(regexp_replace(name, '^(nccl|gloo|c10d|xccl|rccl)::?', '')), '_', '') AS s)
    SELECT CASE
        WHEN s LIKE '%allreduce%' THEN 'AllReduce'
        WHEN s LIKE '%allgather%' THEN 'AllGather'
        WHEN s LIKE '%reducescatter%' THEN 'ReduceScatter'
        WHEN s LIKE '%alltoall%' THEN 'AllToAll'
        WHEN s LIKE '%broadcast%' THEN 'Broadcast'
        WHEN s LIKE '%barrier%' THEN 'Barrier'
        WHEN s LIKE 'send%' OR s LIKE '%isend%' THEN 'Send'
        WHEN s LIKE 'recv%' OR s LIKE '%irecv%' THEN 'Recv'
        WHEN s LIKE '%reduce%' THEN 'Reduce'
        WHEN s LIKE '%gather%' THEN 'Gather'
        WHEN s LIKE '%scatter%' THEN 'Scatter'
    END FROM n);

-- Bytes per element of a c10 ScalarType name as record_param_comms writes it ("Float", "BFloat16").
CREATE OR REPLACE MACRO dtype_bytes(dtype) AS
    CASE
        WHEN dtype IN ('Double', 'Long', 'ComplexFloat', 'UInt64', 'Float64', 'Int64') THEN 8
        WHEN dtype IN ('Float', 'Int', 'UInt32', 'ComplexHalf', 'Float32', 'Int32') THEN 4
        WHEN dtype IN ('Half', 'BFloat16', 'Short', 'UInt16', 'Float16', 'Int16') THEN 2
        WHEN dtype IN ('Byte', 'Char', 'Bool', 'QInt8', 'QUInt8', 'UInt8', 'Int8')
          OR dtype LIKE 'Float8%' THEN 1
        WHEN dtype = 'ComplexDouble' THEN 16
    END;

-- TraceLens' communication kernel (v1.0.0 TraceEventUtils.is_communication_string: "rccl",
-- "nccl" or "cross_device_reduce" anywhere in the name, any case), which op_summary leaves out
-- of direct times as TraceLens does
CREATE OR REPLACE MACRO tracelens_comm_kernel(name) AS
    regexp_matches(name, 'nccl|rccl|cross_device_reduce', 'i');
