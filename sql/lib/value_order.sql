-- uses: none
-- value_magnitude: the number a configuration value stands for, so that a sweep sorts by
-- magnitude: `16` is 16, `100M` 1e8, `2G` 2e9, `512KB` 512e3, `4GiB` 4 x 1024^3, and a name
-- ending in one the same (`subg100M` 1e8, `tp4` 4). NULL when the value does not end in a number
-- with at most a size suffix (K, M, G, T, P; B and the binary i optional).
-- @arg value  any  the value, as text
-- @ret DOUBLE
CREATE OR REPLACE MACRO value_magnitude(value) AS
    TRY_CAST(regexp_extract(CAST(value AS VARCHAR),
                            '([0-9]+(\.[0-9]+)?)\s*[kmgtp]?i?b?$', 1, 'i') AS DOUBLE)
    * power(CASE WHEN regexp_matches(CAST(value AS VARCHAR), '[kmgtp]ib?$', 'i') THEN 1024
                 ELSE 1000 END,
            coalesce(list_position(['K', 'M', 'G', 'T', 'P'],
                                   upper(regexp_extract(CAST(value AS VARCHAR),
                                                        '[0-9]\s*([kmgtp]?)i?b?$', 1,
                                                        'i'))), 0));
