-- Each NVTX range's name (and Kineto user annotation's) as a small integer, for the ranges the
-- sources first_file_id to last_file_id (variables) brought: store.nvtx_names numbers every
-- distinct name of the warehouse once (a new name after the known ones), with a row per run that
-- holds it, and store.nvtx_ranges.name_id points there. An autograd-NVTX capture holds millions
-- of ranges of a few thousand names: grouping them by the integer, then reading each name's text
-- once, is what keeps nvtx_summary and nvtx_gpu_projection off hashing millions of strings.
-- Derive entry nvtx_names (tracewh.store.derive): a change here refills every source when the
-- warehouse is next opened for writing.
-- New names are numbered by the first source that brought them, then by text, so the numbers do
-- not depend on how many sources one ingest wrote at once (nor on a refill, one source at a time).
INSERT INTO store.nvtx_names
WITH seen AS (
    SELECT run_id, name, min(file_id) AS first_file_id FROM store.nvtx_ranges
    WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id')
      AND name IS NOT NULL
    GROUP BY run_id, name
), known AS (
    SELECT DISTINCT name, name_id FROM store.nvtx_names
), fresh AS (
    SELECT name, (SELECT coalesce(max(name_id), 0) FROM store.nvtx_names)
                 + row_number() OVER (ORDER BY min(first_file_id), name) AS name_id
    FROM seen WHERE name NOT IN (SELECT name FROM known)
    GROUP BY name
)
SELECT s.run_id, i.name_id, s.name
FROM seen s JOIN (SELECT * FROM known UNION ALL SELECT * FROM fresh) i USING (name)
WHERE NOT EXISTS (SELECT 1 FROM store.nvtx_names n WHERE n.run_id = s.run_id AND n.name = s.name);

UPDATE store.nvtx_ranges AS r
SET name_id = n.name_id
FROM (SELECT DISTINCT name, name_id FROM store.nvtx_names) n
WHERE n.name = r.name
  AND r.file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id');
