-- uses: none
-- Host-side framework operators (Kineto cpu_op), with their arguments.
CREATE OR REPLACE VIEW cpu_ops AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    name,
    category,
    correlation_id,
    external_id,
    args,             -- JSON
    iteration
FROM store.cpu_ops;
