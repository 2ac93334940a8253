"""Workload cards (CCL-Bench layout): a YAML file with a top-level `workload:` key beside the
traces. Stored whole as run metadata; the fields metrics need become columns of runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

_CARD_KEY = re.compile(r"^workload\s*:", re.M)
# Real cards are a few KB; a bigger YAML file is not read as one (its text is stored in runs)
CARD_MAX_BYTES = 1 << 20


class _NoAliases(yaml.SafeLoader):
    """Safe YAML without aliases: a 1 KB card of nested aliases ("billion laughs") expands into
    gigabytes once its document is stored as JSON. Cards written by hand have no use for them."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "holds a YAML alias (*name)",
                                              self.peek_event().start_mark)
        return super().compose_node(parent, index)


def find_card(directory: Path) -> Path | None:
    for card in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
        try:
            if not card.is_file():
                continue
            with card.open(errors="replace") as text:
                head = text.read(CARD_MAX_BYTES + 1)  # a card says `workload:` near its top
            if _CARD_KEY.search(head):
                return card
        except OSError:
            continue
    return None


def read_card(directory: Path) -> tuple[dict | None, list[str]]:
    """The card's fields for store.runs (None when the directory has no card, or the card cannot
    be read), and warnings naming the card and what is wrong with it: a wrong card is never a
    reason to refuse the traces beside it."""
    card = find_card(directory)
    if card is None:
        return None, []
    try:
        size = card.stat().st_size
        if size > CARD_MAX_BYTES:
            return None, [f"workload card {card}: {size / 2**20:.1f} MiB, more than the "
                          f"{CARD_MAX_BYTES >> 20} MiB a card can be: not read"]
        doc = yaml.load(card.read_text(errors="replace"), Loader=_NoAliases)
    except (OSError, yaml.YAMLError) as exc:
        return None, [f"workload card {card}: not read ({_problem(exc)})"]
    if not isinstance(doc, dict):
        return None, [f"workload card {card}: not read (a {type(doc).__name__}, not a mapping)"]
    warnings = wrong_types(card, doc, _SHAPE)
    workload = as_dict(doc.get("workload"))
    data = as_dict(workload.get("data"))
    hardware = as_dict(workload.get("hardware"))
    xpu = as_dict(hardware.get("xpu_spec"))
    return {
        "description": _text(doc.get("description")),
        "batch_size": _int(data.get("batch_size")),
        "seq_len": _int(data.get("seq_len")),
        "gpus_per_node": _int(xpu.get("count_per_node")),
        "metadata": json.dumps({"workload_card": doc, "card_path": str(card)}, default=str),
    }, warnings


# The card fields tracewh reads, and the mapping each must be (CCL-Bench layout)
_SHAPE = {"workload": {"data": {}, "hardware": {"xpu_spec": {}}},
          "Model-executor": {"model_plan_parallelization": {}}}


def wrong_types(path: Path, doc: dict, shape: dict, where: str = "") -> list[str]:
    """One warning per field of `shape` that `doc` holds but not as a mapping."""
    warnings = []
    for key, inner in shape.items():
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            warnings.append(f"{path}: field {where}{key} is {type(value).__name__} {value!r:.40}, "
                            "not a mapping: ignored")
        else:
            warnings += wrong_types(path, value, inner, f"{where}{key}.")
    return warnings


def _problem(exc: Exception) -> str:
    """A YAML error in one line: what, and where ('holds a YAML alias at line 2')."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        return f"{exc.problem} at line {exc.problem_mark.line + 1}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def as_dict(value) -> dict:
    """value when it is a mapping, else an empty one (a card field of the wrong type)."""
    return value if isinstance(value, dict) else {}


def _int(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _text(value) -> str | None:
    return None if value is None else str(value)
