-- uses: none
-- NVTX ranges and marks (nsys), and user annotations (Kineto, domain 'torch').
CREATE OR REPLACE VIEW nvtx_ranges AS
SELECT
    run_id,
    rank,
    file_id,
    range_id,          -- unique within file_id
    pid,
    tid,
    start_ns,
    end_ns,            -- NULL for marks
    end_ns - start_ns AS dur_ns,
    domain,            -- NULL = default domain
    coalesce(domain_guessed, false) AS domain_guessed, -- domain inferred from the names (nsys: its create event is not in the export)
    name,
    name_id,           -- the name as an integer (the nvtx_names view): group millions of ranges by it
    kind,              -- push_pop | start_end | mark | annotation | gpu_annotation
    depth,             -- 0 = outermost on its thread
    parent_id,         -- range_id of the tightest enclosing range on the same thread
    category,
    color,
    payload,
    external_id,       -- Kineto: links an annotation to the runtime calls and GPU work under it
    phase,             -- forward | backward | optimizer: the name matches the default phase names
                       -- (sql/lib/phase_names.sql; stored at ingest, sql/nvtx_range_facts.sql)
    data_loading       -- true: the name matches the default data-loader names (NULL: it does not)
FROM store.nvtx_ranges;
