"""Workload cards (CCL-Bench layout): a YAML file with a top-level `workload:` key beside the
traces. Stored whole as run metadata; the fields metrics need become columns of runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

_CARD_KEY = re.compile(r"^workload\s*:", re.M)


def find_card(directory: Path) -> Path | None:
    for card in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
        try:
            if _CARD_KEY.search(card.read_text(errors="replace")):
                return card
        except OSError:
            continue
    return None


def read_card(directory: Path) -> dict | None:
    """The card's fields for store.runs, or None when the directory has no (readable) card."""
    import yaml

    card = find_card(directory)
    if card is None:
        return None
    try:
        doc = yaml.safe_load(card.read_text(errors="replace"))
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict):
        return None
    workload = doc.get("workload") or {}
    data = _dict(workload.get("data"))
    hardware = _dict(workload.get("hardware"))
    xpu = _dict(hardware.get("xpu_spec"))
    return {
        "description": _text(doc.get("description")),
        "batch_size": _int(data.get("batch_size")),
        "seq_len": _int(data.get("seq_len")),
        "gpus_per_node": _int(xpu.get("count_per_node")),
        "metadata": json.dumps({"workload_card": doc, "card_path": str(card)}, default=str),
    }


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _text(value) -> str | None:
    return None if value is None else str(value)
