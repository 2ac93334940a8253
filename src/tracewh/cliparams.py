"""Command-line values converted without pydantic, for the plain types tracewh's options take.

typer 0.2x converts every command-line value with a pydantic TypeAdapter built per parameter:
importing pydantic and building the adapters costs about 0.1 s CPU at every start, a third of
`tracewh runs` (bench/startup.py). `plain_value` converts str, int, float, Path, Enum choices
and lists of them as those adapters do; a value it is not sure of (one that does not parse, out
of its range, another type) goes to typer's own conversion, so every error reads as before.
With a typer that has no such layer, `install` changes nothing.

`install` replaces `typer.core.build_runtime_param`, which is private: pyproject.toml pins typer
to the versions this was tested on (0.29), and tests/test_startup.py fails when the installed
typer no longer takes the patch (or lies outside the pin). A lighter layer on typer's public
API is not possible there: every typer 0.29 parameter, even one with `parser=`, is converted
through a pydantic TypeAdapter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

UNSURE = object()  # plain_value leaves this value to typer
_NUMBER = {int: re.compile(r"-?\d+"), float: re.compile(r"-?\d+(\.\d+)?")}


def plain_value(descriptor, value: Any, param, ctx) -> Any:
    """`value` converted to `descriptor.annotation`, or UNSURE."""
    from typer._param_types import coerce_cli_choice, coerce_cli_path

    annotation, info = descriptor.annotation, descriptor.parameter_info
    if info.parser is not None:  # its own conversion (--units): called as typer would
        if isinstance(annotation, type) and isinstance(value, annotation):
            return value
        try:
            return info.parser(value) if isinstance(value, str) else UNSURE
        except Exception:  # typer words the error
            return UNSURE
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        items = [plain_value(_ItemOf(descriptor, item), v, param, ctx)
                 for v in (value if isinstance(value, (list, tuple)) else [value])]
        return UNSURE if any(v is UNSURE for v in items) else items
    if annotation is str:
        return value if isinstance(value, str) else UNSURE
    if annotation in _NUMBER and not info.clamp:
        if type(value) is str and _NUMBER[annotation].fullmatch(value) or type(value) is int \
                or (annotation is float and type(value) is float):
            number = annotation(value)
            if not ((info.min is not None and number < info.min)
                    or (info.max is not None and number > info.max)):
                return number
        return UNSURE
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(value, choices=list(annotation),
                                     case_sensitive=info.case_sensitive, ctx=ctx)
        except ValueError:  # typer words it through pydantic
            return UNSURE
    if annotation is Path and info.path_type is None and (isinstance(value, Path) or (
            isinstance(value, str) and value)):
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return UNSURE


@dataclass(frozen=True)
class _ItemOf:
    """A list parameter's descriptor, seen as one of its items."""

    of: Any
    annotation: Any

    @property
    def parameter_info(self):
        return self.of.parameter_info


def install() -> None:
    """Make typer convert plain values with plain_value, and the rest as it does."""
    try:
        import typer.core
        from typer._coercion import RuntimeParam
    except ImportError:  # a typer without the pydantic layer
        return
    typer_build = getattr(typer.core, "build_runtime_param", None)
    if typer_build is None or getattr(typer_build, "plain", False):
        return

    @dataclass(frozen=True)
    class PlainRuntimeParam(RuntimeParam):
        descriptor: Any = None

        def _coerce_value(self, value, param, ctx):
            converted = plain_value(self.descriptor, value, param, ctx)
            if converted is UNSURE:
                return typer_build(self.descriptor)._coerce_value(value, param=param, ctx=ctx)
            return converted

    def build_runtime_param(descriptor):
        if descriptor.file_annotation is not None:
            return typer_build(descriptor)
        return PlainRuntimeParam(parameter_info=descriptor.parameter_info,
                                 annotation=descriptor.annotation, descriptor=descriptor)

    build_runtime_param.plain = True
    typer.core.build_runtime_param = build_runtime_param
