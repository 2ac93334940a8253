-- 0013: nsys OS runtime calls (OSRT_API: read, write, pread, fsync, open, poll, futex, pthread
-- waits, ...) with their durations and threads; they were dropped.
-- (Branch linklayer: numbered gap-free here; the lead renumbers at merge.)
CREATE TABLE store.os_calls (
    run_id        VARCHAR NOT NULL,
    rank          INTEGER NOT NULL,
    file_id       BIGINT NOT NULL,
    pid           BIGINT,
    tid           BIGINT,
    start_ns      BIGINT NOT NULL,
    end_ns        BIGINT NOT NULL,
    name          VARCHAR,            -- the libc / pthread function: read, fsync, pthread_cond_wait
    return_value  BIGINT,
    nesting_level INTEGER,            -- 0 = called by the application, above 0 = inside another call
    iteration     INTEGER
);
