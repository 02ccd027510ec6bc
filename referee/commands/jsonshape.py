"""The shape of a command's --json document, in words, for its help: written from the pydantic
model that also prints the document, so the two cannot drift apart.

One line per field, as a jq path (`matches[].seats[].bot`), its type and its description."""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

# The --json option's own help: the document's fields are in the command's help, at its end.
JSON_HELP = "print one JSON document instead of text (its fields: at the end of --help)"

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def describe(model: type[BaseModel]) -> str:
    """The help text's paragraph on --json: every field of the document, nested ones too."""
    rows = list(_fields(model, ""))
    width = max(len(path) for path, _, _ in rows)
    lines = [f"{path.ljust(width)}  {kind}  {text}".rstrip() for path, kind, text in rows]
    # \b: click keeps the lines of the paragraph it starts as they are.
    return "With --json: one JSON document on stdout, and nothing else:\n\n\b\n" + "\n".join(lines)


def _fields(model: type[BaseModel], prefix: str) -> list[tuple[str, str, str]]:
    rows = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        kind, inner, nested = _kind(info.annotation)
        rows.append((path, kind, info.description or ""))
        if nested is not None:
            rows += _fields(nested, f"{path}{inner}.")
    return rows


def _kind(annotation: Any) -> tuple[str, str, type[BaseModel] | None]:
    """(the type in words, the path step into it, the model inside it if any)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        kind, step, nested = _kind(present[0]) if len(present) == 1 else ("any", "", None)
        return f"{kind} or null", step, nested
    if origin is list or origin is tuple:
        kind, step, nested = _kind(args[0])
        return f"list of {kind}", f"[]{step}", nested
    if origin is dict:
        kind, step, nested = _kind(args[1])
        return f"object of {kind} by {_kind(args[0])[0]}", f"[KEY]{step}", nested
    if origin is Literal:
        return " | ".join(repr(a) for a in args), "", None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object", "", annotation
    return _SCALARS.get(annotation, getattr(annotation, "__name__", str(annotation))), "", None
