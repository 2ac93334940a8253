-- uses: none
-- A kernel's base name from its demangled name, as nsys's shortName gives it:
-- 'void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)' -> 'vectorized_elementwise_kernel',
-- 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)' -> 'ncclDevKernel_SendRecv'.
-- '(anonymous namespace)::' is dropped first, else its '(' would end the name before it starts:
-- 'void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>(...)'
-- -> 'multi_tensor_apply_kernel'.
CREATE OR REPLACE MACRO kernel_short_name(name) AS
    regexp_extract(regexp_extract(regexp_replace(
        regexp_replace(name, '\(anonymous namespace\)::', '', 'g'), '^void ', ''),
        '^[^<(]*', 0), '([^:]*)$', 1);
