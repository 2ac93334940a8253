-- uses: none
-- One row per source with CPU ops (Kineto): whether the trace recorded shapes (record_shapes=True).
CREATE OR REPLACE VIEW op_shapes_recorded AS
SELECT run_id, rank, file_id, shapes_recorded FROM store.shape_sources;
