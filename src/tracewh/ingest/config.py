"""A run's configuration (tp, dp, zero stage, micro batch, ...) from what lies around its files:
--run-param, the workload card, a DeepSpeed ds_config.json, a Megatron arguments block, the file
name read with --name-template. Each value is stored with its source (store.run_params); the
runs view keeps the most trusted one per key."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import IngestError, TracewhError
from .card import as_dict, wrong_types
from .logs import group_names

# Megatron argument -> configuration key
_MEGATRON = {
    "tensor_model_parallel_size": "tp", "pipeline_model_parallel_size": "pp",
    "data_parallel_size": "dp", "context_parallel_size": "cp", "expert_model_parallel_size": "ep",
    "zero_stage": "zero_stage", "num_layers": "layers", "hidden_size": "hidden",
    "num_attention_heads": "heads", "seq_length": "seq_len", "global_batch_size": "global_batch",
    "micro_batch_size": "micro_batch",
}
_ARGUMENTS = re.compile(r"-+ arguments -+\n(.*?)\n-+ end of arguments -+", re.S)
_ARGUMENT = re.compile(r"^\s+(\w+) \.{2,} (.*?)\s*$", re.M)
_FIELD = re.compile(r"\{(\w*)\}")


def parse_run_params(specs: list[str]) -> list[tuple[str, str]]:
    """`--run-param KEY=VALUE`, repeatable."""
    found = []
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not re.fullmatch(r"\w+", key.strip()):
            raise TracewhError(f"--run-param {spec!r}: expected KEY=VALUE, e.g. tp=4")
        found.append((key.strip(), value.strip()))
    return found


def compile_template(template: str | None) -> re.Pattern | None:
    """'log-{model_size}-tp{tp}' -> a regular expression matching a whole file name stem."""
    if template is None:
        return None
    fields = _FIELD.findall(template)
    if not fields or "" in fields or len(set(fields)) != len(fields):
        raise IngestError("--name-template", f"{template!r}: needs distinct {{field}} names",
                          "e.g. 'log-{model_size}-tp{tp}-dp{dp}'")
    parts = _FIELD.split(template)  # literal, field, literal, field, ..., literal
    regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
    return re.compile(f"^{regex}$")


def from_name(template: re.Pattern, names: list[str]) -> list[tuple[str, str]] | None:
    """The template's fields of the first name it matches whole; None when none matches.
    Matched by DuckDB's RE2, in time linear in the name: with Python's backtracking engine
    twelve lazy fields against a name of 120 dashes ran for minutes."""
    import duckdb

    fields = group_names(template)
    with duckdb.connect() as con:
        for name in names:
            (found,) = con.execute(
                "SELECT CASE WHEN regexp_matches($name, $p) THEN regexp_extract($name, $p, $f) END",
                {"name": name, "p": template.pattern, "f": fields}).fetchone()
            if found is not None:
                return list(found.items())
    return None


def from_card(doc: dict) -> list[tuple[str, str]]:
    """CCL-Bench card: Model-executor.model_plan_parallelization and workload.data (a field of
    the wrong type is ignored here; read_card warns of it)."""
    plan = as_dict(as_dict(doc.get("Model-executor")).get("model_plan_parallelization"))
    data = as_dict(as_dict(doc.get("workload")).get("data"))
    found = [(k, plan[k]) for k in ("tp", "pp", "cp", "ep") if plan.get(k) is not None]
    replicate, shard = plan.get("dp_replicate"), plan.get("dp_shard")
    if replicate is not None or shard is not None:
        try:
            found.append(("dp", int(replicate or 1) * int(shard or 1)))
        except (TypeError, ValueError):
            pass  # not numbers: the card's own values stay in runs.metadata
    found += [(key, data[field]) for key, field in (("global_batch", "batch_size"),
                                                    ("seq_len", "seq_len")) if data.get(field)]
    return [(k, str(v)) for k, v in found]


def find_ds_config(*directories: Path) -> Path | None:
    for directory in directories:
        for path in sorted(directory.glob("*ds_config*.json")):
            if path.is_file():  # a FIFO or a folder of that name is not read
                return path
    return None


def from_ds_config(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """DeepSpeed config: zero stage, offload devices and ratio, sub-group size, batch sizes; and
    warnings naming the config and what is wrong with it (never a reason to refuse a trace)."""
    try:
        doc = json.loads(path.read_text(errors="replace"))
    except (OSError, ValueError) as exc:
        return [], [f"DeepSpeed config {path}: not read ({exc})"]
    if not isinstance(doc, dict):
        return [], [f"DeepSpeed config {path}: not read (a JSON {type(doc).__name__}, not an object)"]
    warnings = wrong_types(path, doc, {"zero_optimization": {"offload_optimizer": {},
                                                            "offload_param": {}}})
    zero = as_dict(doc.get("zero_optimization"))
    optimizer, param = as_dict(zero.get("offload_optimizer")), as_dict(zero.get("offload_param"))
    found = {
        "zero_stage": zero.get("stage"),
        "micro_batch": doc.get("train_micro_batch_size_per_gpu"),
        "global_batch": doc.get("train_batch_size"),
        "gradient_accumulation_steps": doc.get("gradient_accumulation_steps"),
        "offload_optimizer": optimizer.get("device"),
        "ratio": optimizer.get("ratio"),
        "offload_param": param.get("device"),
        "subgroup": zero.get("sub_group_size"),
    }
    return [(k, str(v)) for k, v in found.items() if v is not None and v != "auto"], warnings


def from_megatron_arguments(text: str) -> list[tuple[str, str]]:
    """The `------ arguments ------` block Megatron prints at start-up."""
    block = _ARGUMENTS.search(text)
    if not block:
        return []
    return [(_MEGATRON[name], value) for name, value in _ARGUMENT.findall(block.group(1))
            if name in _MEGATRON and value != "None"]


def collect(path: Path, run_id: str, run_root: Path, card: dict | None, log_text: str,
            options: dict) -> tuple[list[tuple[str, str, str]], list[str], list[str]]:
    """Every (key, value, source) known for the run of the file at `path`, the file's own
    warnings, and warnings about the configuration files read (the same for every file beside
    them)."""
    found = [(k, v, "run-param") for k, v in options.get("run_params") or []]
    if card:
        found += [(k, v, "card") for k, v in from_card(card)]
    warnings, config_warnings = [], []
    ds_config = find_ds_config(path.parent, run_root)
    if ds_config is not None:
        ds_found, config_warnings = from_ds_config(ds_config)
        found += [(k, v, "ds_config") for k, v in ds_found]
    found += [(k, v, "megatron-args") for k, v in from_megatron_arguments(log_text)]
    template = options.get("name_template")
    if template is not None:
        named = from_name(template, [path.stem, path.name.split(".")[0], run_id.rsplit("/", 1)[-1]])
        if named is None:
            warnings.append(f"name does not match --name-template {template.pattern!r}")
        found += [(k, v, "name-template") for k, v in named or []]
    return found, warnings, config_warnings
