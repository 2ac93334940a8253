-- What each NVTX range's (and Kineto user annotation's) name says, for the ranges the sources
-- first_file_id to last_file_id (variables) brought, stored once at ingest so that the views
-- need not run regular expressions over the millions of ranges of an autograd-NVTX capture:
--   iteration     iteration_number(name): the N of ProfilerStep#N (the iterations view)
--   phase         phase_kind(name) of a name matching phase_pattern's default (host_activity)
--   data_loading  true: the name matches data_loader_pattern's default (host_activity)
--   launch_phase  1 optimizer, 2 backward, 3 forward: the phase a collective launched inside
--                 the range is in, by parallel_groups' rules
-- NULL: the name says nothing of it. The rules run once per distinct name; only ranges whose
-- name says something are written. Derive entry nvtx_range_facts (tracewh.store.derive): a change
-- here refills every source when the warehouse is next opened for writing.
CREATE OR REPLACE TEMP TABLE _nvtx_name_facts AS
WITH names AS MATERIALIZED (  -- the rules below run per name, not per range
    SELECT DISTINCT name FROM store.nvtx_ranges
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND name IS NOT NULL
),
facts AS (
    SELECT name,
           iteration_number(name) AS iteration,
           CASE WHEN regexp_matches(name, phase_pattern(NULL)) THEN phase_kind(name) END AS phase,
           CASE WHEN regexp_matches(name, data_loader_pattern(NULL)) THEN true END AS data_loading,
           CASE WHEN NOT regexp_matches(name, '(?i)optimi[sz]er|_take_model_step|backward|forward')
                     OR regexp_matches(name, '(?i)zero_grad') THEN NULL
                WHEN regexp_matches(name, '(?i)optimi[sz]er|_take_model_step') THEN 1
                WHEN regexp_matches(name, '(?i)backward') THEN 2 ELSE 3 END AS launch_phase
    FROM names
)
SELECT * FROM facts
WHERE iteration IS NOT NULL OR phase IS NOT NULL OR data_loading OR launch_phase IS NOT NULL;

UPDATE store.nvtx_ranges AS r
SET iteration = f.iteration, phase = f.phase, data_loading = f.data_loading,
    launch_phase = f.launch_phase
FROM _nvtx_name_facts f
WHERE f.name = r.name
  AND r.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id');

DROP TABLE _nvtx_name_facts;
