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
