-- Enum labels of the nsys export (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND), written out
-- because the 2021 export has no ENUM tables. Short copy kinds, as users and nsys 2021 say them.
CREATE OR REPLACE TEMP MACRO nsys_copy_kind(k) AS
    CASE k WHEN 0 THEN 'Unknown' WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' WHEN 3 THEN 'HtoA'
           WHEN 4 THEN 'AtoH' WHEN 5 THEN 'AtoA' WHEN 6 THEN 'AtoD' WHEN 7 THEN 'DtoA'
           WHEN 8 THEN 'DtoD' WHEN 9 THEN 'HtoH' WHEN 10 THEN 'PtoP' WHEN 11 THEN 'UVM HtoD'
           WHEN 12 THEN 'UVM DtoH' WHEN 13 THEN 'UVM DtoD' END;

CREATE OR REPLACE TEMP MACRO nsys_mem_kind(k) AS
    CASE k WHEN 0 THEN 'Pageable' WHEN 1 THEN 'Pinned' WHEN 2 THEN 'Device' WHEN 3 THEN 'Array'
           WHEN 4 THEN 'Managed' WHEN 5 THEN 'Device Static' WHEN 6 THEN 'Managed Static'
           WHEN 7 THEN 'Unknown' END;
