-- 0010: the kernel kind patterns (DESIGN section 6) as a table: tracewh's own, loaded from
-- sql/kernel_kinds.csv whenever a tracewh with other patterns opens the warehouse, and the
-- user's (`tracewh kinds load FILE`). kernel_kind(name) takes the first that matches, user
-- patterns first, each origin in its file's order (position).
CREATE TABLE store.kernel_kinds (
    origin   VARCHAR NOT NULL,  -- user | tracewh
    position INTEGER NOT NULL,  -- order within its file, from 1
    kind     VARCHAR NOT NULL,  -- comm | compute | sync | other
    pattern  VARCHAR NOT NULL,  -- a regular expression (RE2, regexp_matches) on the kernel name
    note     VARCHAR
);
