-- uses: none
-- The name of each nvtx_ranges.name_id: every distinct NVTX range and user annotation name of
-- the warehouse, numbered once (sql/nvtx_name_ids.sql). A metric that groups millions of ranges
-- by name groups by name_id and joins this view for the text.
CREATE OR REPLACE VIEW nvtx_names AS
SELECT
    name_id,           -- nvtx_ranges.name_id
    name
FROM store.nvtx_names;
