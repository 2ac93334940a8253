-- 0015 belongs to another branch merged before this one. This placeholder only keeps the numbers
-- without a gap on branch perfstore (whose migration is 0017): delete it at merge.
SELECT 1;
