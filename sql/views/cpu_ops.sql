-- uses: range_nesting
-- Host-side framework operators (Kineto cpu_op), with their arguments, as a tree per thread.
-- The tree is range_nesting's (sql/lib/range_nesting.sql), the rule nvtx_ranges follows: an
-- op's depth is the number of ops of its thread open when it starts, its parent the innermost
-- of them. Ops at one instant: the longer one is the parent; one that starts as another ends
-- is its sibling. Ops that overlap without nesting (B starts inside A and ends after it, as
-- profilers record around thread switches): B is A's child; A's self time loses only the part
-- of B inside A; after A ends, an op C starting inside B has depth 1 (one op open) and A as
-- parent (the sweep counts open ops; it keeps no stack): C's time is then part of B's self
-- time. Never an error, never a cycle, self_ns never below 0.

-- One span per op for the sweep: the op's id, the thread keyed by file and pid.
CREATE OR REPLACE VIEW _cpu_op_spans AS
SELECT op_id AS range_id, file_id * 4294967296 + coalesce(pid, 0) AS pid, tid, start_ns, end_ns
FROM store.cpu_ops;

CREATE OR REPLACE VIEW cpu_ops AS
WITH ops AS (
    SELECT o.*, CAST(n.depth AS INTEGER) AS depth, n.parent_id
    FROM store.cpu_ops o LEFT JOIN range_nesting('_cpu_op_spans') n ON n.range_id = o.op_id
), children AS (
    -- the time of each op's children inside it
    SELECT c.parent_id AS op_id,
           sum(greatest(least(c.end_ns, p.end_ns) - c.start_ns, 0)) AS child_ns
    FROM ops c JOIN store.cpu_ops p ON p.op_id = c.parent_id
    GROUP BY c.parent_id
)
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
    CAST(greatest(end_ns - start_ns - coalesce(child_ns, 0), 0) AS BIGINT) AS self_ns
FROM ops LEFT JOIN children USING (op_id);
