-- Classify the kernel names a source (variable file_id) brought that are not known yet.
INSERT INTO store.kernel_names
SELECT name, kernel_kind(name)
FROM (SELECT DISTINCT name FROM store.kernels WHERE file_id = getvariable('file_id'))
WHERE name NOT IN (SELECT name FROM store.kernel_names);
