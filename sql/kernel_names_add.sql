-- Classify the kernel names the sources just written (variables first_file_id, last_file_id)
-- brought that are not known yet.
INSERT INTO store.kernel_names
SELECT name, kernel_kind(name)
FROM (SELECT DISTINCT name FROM store.kernels WHERE file_id BETWEEN getvariable('first_file_id') AND getvariable('last_file_id'))
WHERE name NOT IN (SELECT name FROM store.kernel_names);
