-- uses: none
-- Parse a duration the way `nsys stats --filter-time` takes it: `4s420ms`, `35.39s`, `1500us`,
-- `2m`, or a bare integer of nanoseconds. NULL or blank in, NULL out; anything else is an error.
CREATE OR REPLACE MACRO duration_ns(txt) AS
    CASE
        WHEN txt IS NULL OR trim(txt) = '' THEN NULL
        WHEN regexp_full_match(trim(txt), '[0-9]+') THEN CAST(trim(txt) AS BIGINT)
        WHEN NOT regexp_full_match(lower(trim(txt)), '([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+')
            THEN CAST(error('not a duration like 4s420ms: ' || txt) AS BIGINT)
        ELSE CAST(round(list_sum(list_transform(
                 regexp_extract_all(lower(trim(txt)), '[0-9]+(?:\.[0-9]+)?(?:ns|us|ms|s|m|h)'),
                 lambda part: CAST(regexp_extract(part, '^[0-9.]+') AS DOUBLE) *
                     CASE regexp_extract(part, '[a-z]+$')
                         WHEN 'ns' THEN 1 WHEN 'us' THEN 1e3 WHEN 'ms' THEN 1e6
                         WHEN 's' THEN 1e9 WHEN 'm' THEN 60e9 WHEN 'h' THEN 3600e9
                     END))) AS BIGINT)
    END;
