-- uses: none
-- The iteration number a range name stands for, or NULL: PyTorch's `ProfilerStep#12`, and the
-- common hand-written NVTX names `iteration 12`, `iteration_12`, `step 12`, `step_12`.
CREATE OR REPLACE MACRO iteration_number(name) AS
    TRY_CAST(regexp_extract(name, '^(?:ProfilerStep#|[Ii]teration[ _#]?|[Ss]tep[ _#]?)([0-9]+)$', 1) AS INTEGER);
