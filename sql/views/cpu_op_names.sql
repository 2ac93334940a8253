-- uses: none
-- CPU ops by id, without cpu_ops' tree: for looking up the ops that memory_events.cpu_op_id
-- (or gpu_op_launches.cpu_op_id) names. cpu_ops works out depth, parent and self time in a
-- sweep over every op of the warehouse whatever the query reads (about 1 CPU s per million
-- ops); this view reads the stored columns only.
CREATE OR REPLACE VIEW cpu_op_names AS
SELECT
    run_id,
    rank,
    file_id,
    op_id,            -- cpu_ops.op_id
    tid,
    start_ns,
    end_ns,
    name,
    iteration
FROM store.cpu_ops;
