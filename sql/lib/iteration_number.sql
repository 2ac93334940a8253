-- uses: none
-- The iteration number a range name stands for, or NULL: PyTorch's `ProfilerStep#12`, and the
-- common hand-written NVTX names `iteration 12`, `iteration_12`, `step 12`, `step_12`.
-- complexity: O(1) per name; the regex runs only on names with one of the prefixes (a prefix
-- test is ~10x cheaper, and an autograd-NVTX capture holds millions of other names)
CREATE OR REPLACE MACRO iteration_number(name) AS
    CASE WHEN starts_with(name, 'ProfilerStep#') OR starts_with(name, 'Iteration')
              OR starts_with(name, 'iteration') OR starts_with(name, 'Step')
              OR starts_with(name, 'step')
         THEN TRY_CAST(regexp_extract(name, '^(?:ProfilerStep#|[Ii]teration[ _#]?|[Ss]tep[ _#]?)([0-9]+)$', 1) AS INTEGER)
    END;
