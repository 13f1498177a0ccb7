"""The configuration reference (docs/configuration.md), generated from the config model.

    keys = accepted_keys()          every key the loader accepts: {"server.host", "agents.NAME.url", ...}
    page = render_page()            the Markdown page
    missing = undocumented()        accepted keys without a description (each with where to write one)

Names come from the loader itself: it reads a sample config with every table (`SAMPLE`, one
channel of each platform) and records the keys each table accepts and the values of each
enumerated key (`Problems.keys`, `Problems.choices`), so a key a reader accepts is a key of this
page. Types and defaults come from the model's dataclass fields (`stickyroute.config.model`; the
TOML key is the field's name, or the field `key_docs.FIELDS` names); descriptions, and the type
and default of a key no field holds, from `stickyroute.config.key_docs`. A key without a
description fails `tests/test_config_reference.py`, which names it and where to describe it.
"""

from __future__ import annotations

import dataclasses
import enum
import tempfile
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stickyroute.config import model
from stickyroute.config.key_docs import DESCRIPTIONS, FIELDS, INTRO, TABLES, Doc
from stickyroute.config.loader import read_config
from stickyroute.config.model import ChannelType
from stickyroute.config.platform_api import PlatformApi

__all__ = ["KEY_DOCS_FILE", "SAMPLE", "accepted_keys", "choices", "render_page", "undocumented"]

KEY_DOCS_FILE = "stickyroute/config/key_docs.py"
SAMPLE_AGENT = "a"


def _sample() -> str:
    """A config with every table, one agent and one channel of each platform (values need not be
    valid: only the keys each reader accepts are recorded)."""
    lines = [f"[{table}]" for table in ("server", "admin", "upstream", "routing", "classifier", "state", "hints")]
    lines += [f'[agents.{SAMPLE_AGENT}]\nurl = "http://127.0.0.1:1"', f"[agents.{SAMPLE_AGENT}.channels]"]
    for kind in ChannelType:
        name = kind.value
        lines += [f'[channels.{name}]\ndefault_agent = "{SAMPLE_AGENT}"', f"[channels.{name}.overrides]",
                  f"[channels.{name}.upstream]", f"[[channels.{name}.bindings]]", f"[[channels.{name}.thread_routes]]"]
    return "\n".join(lines) + "\n"


SAMPLE = _sample()


def _pattern(table: str) -> str:
    """A table's dotted key with its names generalised: `channels.telegram.bindings[0]` ->
    `channels.NAME.bindings[]`, `agents.a` -> `agents.NAME`."""
    parts = table.split(".")
    if parts[0] in ("agents", "channels") and len(parts) > 1:
        parts[1] = "NAME"
    return ".".join(parts).replace("[0]", "[]")


def _read_sample() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.toml"
        path.write_text(SAMPLE, encoding="utf-8")
        _config, problems = read_config(path, env={})
    tables: dict[str, tuple[str, ...]] = {}
    for table, keys in problems.keys.items():
        pattern = _pattern(table)
        tables[pattern] = tuple(dict.fromkeys((*tables.get(pattern, ()), *keys)))
    return tables, {_pattern(key.rsplit(".", 1)[0]) + "." + key.rsplit(".", 1)[1]: values
                    for key, values in problems.choices.items()}


def accepted_keys() -> dict[str, tuple[str, ...]]:
    """Table pattern ("" for the top level) -> the keys it accepts, in the loader's order."""
    return _read_sample()[0]


def choices() -> dict[str, tuple[str, ...]]:
    """Dotted key pattern -> the values the loader accepts for it."""
    return _read_sample()[1]


def _documented_as(table: str) -> str:
    """The table whose descriptions `table`'s keys share (a channel's overrides: `[routing]`'s)."""
    return TABLES[table].same_as or table if table in TABLES else table


def undocumented() -> list[str]:
    """One line per accepted key or table without a description, saying where to write it (a key
    that is itself a table also needs a line in `SAMPLE`'s `_sample`, so its own keys are read)."""
    missing = []
    for table, keys in accepted_keys().items():
        if table and table not in TABLES:
            missing.append(f"[{table}]: a table without an intro: add {table!r}: Table(...) to TABLES in "
                           f"{KEY_DOCS_FILE}")
        source = _documented_as(table)
        for key in keys:
            dotted = f"{source}.{key}" if source else key
            if source and dotted not in DESCRIPTIONS:
                missing.append(f"{dotted}: undocumented: add {dotted!r}: \"what it does, its unit\" to DESCRIPTIONS "
                               f"in {KEY_DOCS_FILE}")
    return list(dict.fromkeys(missing))


def _model_class(table: str) -> type | None:
    name = TABLES[table].model if table in TABLES else None
    return getattr(model, name) if name else None


def _field(table: str, key: str) -> tuple[dataclasses.Field[Any], type] | None:
    """The model field behind `table.key` and its class (None when no field holds it)."""
    name = FIELDS.get(f"{table}.{key}", key)
    holder = _model_class(table)
    if name.startswith("api."):
        holder, name = PlatformApi, name.removeprefix("api.")
    if holder is None or not dataclasses.is_dataclass(holder):
        return None
    for found in dataclasses.fields(holder):
        if found.name == name:
            return found, holder
    return None


_TYPE_WORDS = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _type_text(annotation: Any, values: tuple[str, ...] | None) -> str:
    if values:
        return " \\| ".join(f"`{v}`" for v in values)
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        return _type_text(next(a for a in typing.get_args(annotation) if a is not type(None)), None)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return " \\| ".join(f"`{member.value}`" for member in annotation)
    if origin is tuple:
        return f"array of {_type_text(typing.get_args(annotation)[0], None)}s"
    if origin is not None and issubclass(origin, Mapping):
        return "table"
    return _TYPE_WORDS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _value_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, enum.Enum):
        return f"`{value.value}`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, (tuple, list)):
        return "`[" + ", ".join(f'"{v}"' for v in value) + "]`"
    if isinstance(value, int) and value >= model.MIB and value % model.MIB == 0:
        return f"`{value}` ({value // model.MIB} MiB)"
    if isinstance(value, float) and value.is_integer():
        return f"`{value:g}`"
    return f"`{value}`"


def _row(table: str, key: str, enumerated: Mapping[str, tuple[str, ...]]) -> tuple[str, str, str, str]:
    source = _documented_as(table)
    doc = DESCRIPTIONS[f"{source}.{key}"]
    doc = doc if isinstance(doc, Doc) else Doc(doc)
    values = enumerated.get(f"{table}.{key}") or enumerated.get(f"{source}.{key}")
    found = _field(source, key)
    kind = doc.type or (_type_text(typing.get_type_hints(found[1])[found[0].name], values) if found else "")
    if doc.default is not None:
        default = doc.default
    elif found is None:
        default = ""
    elif found[0].default is not dataclasses.MISSING:
        default = _value_text(found[0].default)
    elif found[0].default_factory is not dataclasses.MISSING:
        default = _value_text(found[0].default_factory()) if found[0].name != "api" else "none"
    else:
        default = "required"
    return f"`{key}`", kind, default, doc.text


def render_page() -> str:
    """docs/configuration.md (see the module docstring)."""
    tables, enumerated = _read_sample()
    out = [INTRO.rstrip(), ""]
    for table in tables:
        if not table:
            continue
        info = TABLES[table]
        header = f"[[{table.removesuffix('[]')}]]" if table.endswith("[]") else f"[{table}]"
        out += [f"## `{header}`", "", info.text.rstrip(), ""]
        if info.same_as:
            keys = ", ".join(f"`{key}`" for key in tables[table])
            out += [f"Its keys ({keys}) mean what they mean in [`[{info.same_as}]`](#{info.same_as}); each one set "
                    "here replaces that table's value for this channel.", ""]
            continue
        out += ["| key | type | default | description |", "|---|---|---|---|"]
        out += ["| " + " | ".join(cell.replace("\n", " ") for cell in _row(table, key, enumerated)) + " |"
                for key in tables[table]]
        out.append("")
    return "\n".join(out).rstrip() + "\n"
