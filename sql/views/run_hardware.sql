-- uses: none
-- What each run's workload card says of its hardware (workload.hardware): the GPU model, GPUs
-- per node, the interconnect. For the metrics that need peaks (device_peaks, link_peaks); read
-- from the stored runs, not the runs view, whose configuration columns cost a scan of every
-- NCCL operation (4.9 s on the 8-rank nsys bench, against a few ms here).
CREATE OR REPLACE VIEW run_hardware AS
SELECT
    run_id,
    json_extract_string(metadata, '$.workload_card.workload.hardware.xpu_spec.model') AS xpu_model,
    gpus_per_node,    -- workload.hardware.xpu_spec.count_per_node
    CAST(json_extract(metadata, '$.workload_card.workload.hardware.interconnect') AS VARCHAR)
        AS interconnect   -- JSON text: a name, or {intra_node: ..., inter_node: ...}
FROM store.runs;
