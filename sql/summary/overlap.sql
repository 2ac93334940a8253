-- Communication hidden under compute in a run, from comm_comp_overlap's rows (registered as
-- `overlap`): the whole run's share, and the rank that hides the least (a rank without
-- communication, whose share is NULL, comes last; ties go to the lowest rank). Read by
-- `tracewh summary`.
SELECT any_value(comm_ns) FILTER (WHERE rank IS NULL) AS comm_ns,
       any_value(overlap_pct) FILTER (WHERE rank IS NULL) AS overlap_pct,
       arg_min(rank, (coalesce(overlap_pct, 101), rank)) FILTER (WHERE rank IS NOT NULL)
           AS least_rank,
       arg_min(overlap_pct, (coalesce(overlap_pct, 101), rank)) FILTER (WHERE rank IS NOT NULL)
           AS least_pct
FROM overlap
