-- uses: none
-- Python frames (Kineto python_function, recorded with with_stack=True): the Python call stack
-- over time, nn.Modules included ('nn.Module: Linear_0'). parent_python_id is the calling frame.
CREATE OR REPLACE VIEW python_frames AS
SELECT
    run_id,
    rank,
    file_id,
    pid,
    tid,
    start_ns,
    end_ns,
    end_ns - start_ns AS dur_ns,
    name,                 -- 'file.py(line): function', 'nn.Module: Linear_0'
    python_id,            -- unique within file_id
    python_parent_id,     -- the caller's python_id (NULL: outermost)
    iteration
FROM store.python_frames;
