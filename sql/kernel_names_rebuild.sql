-- Re-classify every kernel name with the patterns of this tracewh (run when the views change).
DELETE FROM store.kernel_names;
INSERT INTO store.kernel_names
SELECT name, kernel_kind(name) FROM (SELECT DISTINCT name FROM store.kernels);
