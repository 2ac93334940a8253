-- How many NVTX ranges / user annotations of the scope have a name containing $annotation (the
-- match critical_path_steps makes), and the distinct names for a did-you-mean. Read only when a
-- metric given an annotation answered no rows.
SELECT count(*) FILTER (WHERE contains(name, $annotation)) AS matching,
       (list(DISTINCT name) FILTER (WHERE name IS NOT NULL))[1:5000] AS names
FROM nvtx_ranges
WHERE end_ns IS NOT NULL AND ($run IS NULL OR run_id = $run) AND ($rank IS NULL OR rank = $rank)
