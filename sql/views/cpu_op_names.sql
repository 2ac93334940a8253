-- uses: none
-- CPU ops by id, without cpu_ops' tree: for looking up the ops that memory_events.cpu_op_id
-- (or gpu_op_launches.cpu_op_id) names. Until migration 0017 stored the tree, cpu_ops swept
-- every op of the warehouse on each read (about 1 CPU s per million ops); both now read stored
-- columns only, and this view stays for the queries that name it.
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
