-- uses: none
-- The name of each nvtx_ranges.name_id, per run: every distinct NVTX range and user annotation
-- name of a run, with its number (one number per name across the warehouse,
-- sql/nvtx_name_ids.sql). A metric that groups millions of ranges by name groups by (run_id,
-- name_id) and joins this view for the text.
CREATE OR REPLACE VIEW nvtx_names AS
SELECT
    run_id,
    name_id,           -- nvtx_ranges.name_id
    name
FROM store.nvtx_names;
