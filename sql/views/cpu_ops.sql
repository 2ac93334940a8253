-- uses: none
-- Host-side framework operators (Kineto cpu_op), with their arguments, as a tree per thread.
-- The tree is stored at ingest (sql/ingest/kineto/22_cpu_op_tree.sql; migrations/0017 for ops
-- stored before it): range_nesting's (sql/lib/range_nesting.sql), the rule nvtx_ranges follows: an
-- op's depth is the number of ops of its thread open when it starts, its parent the innermost
-- of them. Ops at one instant: the longer one is the parent; one that starts as another ends
-- is its sibling. Ops that overlap without nesting (B starts inside A and ends after it, as
-- profilers record around thread switches): B is A's child; A's self time loses only the part
-- of B inside A; after A ends, an op C starting inside B has depth 1 (one op open) and A as
-- parent (the sweep counts open ops; it keeps no stack): C's time is then part of B's self
-- time. Never an error, never a cycle, self_ns never below 0.

CREATE OR REPLACE VIEW cpu_ops AS
SELECT
    run_id,
    rank,
    file_id,
    op_id,            -- unique in the warehouse and kept across `tracewh remove`: file_id * 2^32
                      -- + the op's number in its file (parent_id, memory_events.cpu_op_id and
                      -- gpu_op_launches.cpu_op_id refer to it)
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    name,
    category,
    correlation_id,
    external_id,      -- Kineto: the runtime calls and GPU ops it launched carry the same id
    args,             -- JSON
    iteration,
    depth,            -- 0 = outermost on its thread
    parent_id,        -- op_id of the innermost op open on the thread when it started
    -- time not inside a child: dur_ns minus its children's time within it (children that
    -- overlap each other count twice: never below 0)
    self_ns
FROM store.cpu_ops;
