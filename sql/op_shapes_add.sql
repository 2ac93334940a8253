-- The shapes of the ops the sources first_file_id to last_file_id (variables) brought, stored
-- once (migration 0016) so that the performance models need not parse cpu_ops.args at every
-- query. Rerunnable: the sources' earlier rows go first. Derive entry op_shapes
-- (tracewh.store.derive): a change here refills every source when the warehouse is next opened
-- for writing, and changes the lock of every metric reading these tables.
DELETE FROM store.shaped_ops
WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id');
DELETE FROM store.shape_sources
WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id');

-- whether the trace recorded shapes at all (record_shapes=True)
INSERT INTO store.shape_sources
SELECT run_id, rank, file_id, coalesce(bool_or(args LIKE '%"Input Dims"%'), false)  -- args NULL: none
FROM store.cpu_ops
WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
GROUP BY ALL;

-- the ops with shapes that launched GPU work: the op around each launching call (the launch
-- link, launch_cpu_ops_of: the op with the call's External id, else the innermost open on its
-- thread), so that traces whose kernels carry the correlation id as External id have them too
CREATE OR REPLACE TEMP TABLE _shaped AS
SELECT o.run_id, o.rank, o.file_id, o.op_id, o.external_id, o.name,
       -- as JSON text, parsed where it is read (perf_shapes_json, sql/lib/perf_models.sql)
       CAST(json_extract(o.args, ['$."Input Dims"', '$."Input type"', '$."Concrete Inputs"'])
            AS VARCHAR[]) AS a
FROM store.cpu_ops o
SEMI JOIN launch_cpu_ops_of(getvariable('first_file_id'), getvariable('last_file_id'), false) l
    ON l.cpu_op_id = o.op_id
WHERE o.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
  AND o.args LIKE '%"Input Dims"%';

INSERT INTO store.op_shapes
SELECT (SELECT coalesce(max(shape_id), 0) FROM store.op_shapes)
           + row_number() OVER (ORDER BY name, a[1], a[2], a[3]), name, a[1], a[2], a[3]
FROM (SELECT DISTINCT name, a FROM _shaped) n
WHERE NOT EXISTS (SELECT 1 FROM store.op_shapes s
                  WHERE s.name = n.name AND s.input_dims IS NOT DISTINCT FROM n.a[1]
                    AND s.input_types IS NOT DISTINCT FROM n.a[2]
                    AND s.concrete_inputs IS NOT DISTINCT FROM n.a[3]);

INSERT INTO store.shaped_ops (run_id, rank, file_id, external_id, op_no, shape_id, op_id)
-- op_no in op id order: the same numbers whatever order the join hands the rows over in (a
-- lake assembled from files decoded apart: tracewh.spark_ingest)
SELECT o.run_id, o.rank, o.file_id, o.external_id, row_number() OVER (ORDER BY o.op_id),
       s.shape_id, o.op_id
FROM _shaped o
JOIN store.op_shapes s
    ON s.name = o.name AND s.input_dims IS NOT DISTINCT FROM o.a[1]
   AND s.input_types IS NOT DISTINCT FROM o.a[2] AND s.concrete_inputs IS NOT DISTINCT FROM o.a[3];

DROP TABLE _shaped;
