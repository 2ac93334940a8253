-- uses: none
-- Kernel kinds (DESIGN section 6), version 1.
-- The kind is computed from the name whenever a view is read, so rows already in the warehouse
-- are re-classified as soon as a newer tracewh installs changed patterns.
-- Base: HolisticTraceAnalysis' communication pattern (^nccl|ncclKernel|^hccl|^rccl), widened to
-- the three NCCL naming eras and symmetric-memory kernels, plus custom collectives.
CREATE OR REPLACE MACRO kernel_kind(name) AS
    CASE
        WHEN regexp_matches(name, '^(void )?(nccl|rccl|hccl|ncclDevKernel|ncclKernel|ncclSymk)')
          OR regexp_matches(name, '(^|[^A-Za-z0-9])(multimem_all_reduce|one_shot_all_reduce|two_shot_all_reduce|cross_device_reduce|all_reduce_kernel)')
            THEN 'comm'
        WHEN regexp_matches(name, '(^|[^A-Za-z])(cuStreamWaitValue|cuStreamWriteValue|wait_kernel|spin_wait)')
            THEN 'sync'
        WHEN name IS NULL OR name = '' THEN 'other'
        ELSE 'compute'
    END;
