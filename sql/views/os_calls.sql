-- uses: none
-- OS runtime calls on the host (nsys OSRT_API): file and network I/O, polling, locks and
-- condition waits, with their threads and durations.
CREATE OR REPLACE VIEW os_calls AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    name,             -- read, write, pread64, fsync, open64, poll, futex, pthread_cond_wait, ...
    return_value,
    nesting_level,    -- 0 = called by the application, above 0 = inside another call
    iteration
FROM store.os_calls;
