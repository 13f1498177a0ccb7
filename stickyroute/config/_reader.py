"""Typed, problem-collecting access to a parsed TOML tree (private to `stickyroute.config`).

The loader never stops at the first problem: every getter records what is wrong as a
`ConfigProblem(file, dotted.key, message)` and returns a fallback (the default, or None for a
required key) so reading goes on and every problem of the file is reported at once.

Shapes: a tree is plain Python values from `tomlkit` (`dict`, `list`, `str`, `int`, `float`,
`bool`, dates). After `substitute_env`, a string whose `${VAR}` could not be resolved is an
`Unresolved` marker: the problem is already recorded, so getters skip it silently.
"""

from __future__ import annotations

import datetime
import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

import tomlkit
from tomlkit.exceptions import TOMLKitError

from stickyroute.errors import ConfigProblem

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Problems:
    """The problems found in one config file, in the order they were found."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[ConfigProblem] = []
        self.keys: dict[str, tuple[str, ...]] = {}  # each table read -> its accepted keys (config reference)
        self.choices: dict[str, tuple[str, ...]] = {}  # each enumerated key read -> its accepted values

    def error(self, key: str, message: str) -> None:
        self.items.append(ConfigProblem(self.file, key, message))

    def warn(self, key: str, message: str) -> None:
        self.items.append(ConfigProblem(self.file, key, message, warning=True))

    @property
    def errors(self) -> list[ConfigProblem]:
        return [p for p in self.items if not p.warning]


class Unresolved:
    """A string value naming an unset `${VAR}` (already reported)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def substitute_env(tree: Any, env: Mapping[str, str], problems: Problems, key: str = "",
                   later: Callable[[str], bool] = lambda _key: False) -> Any:
    """`tree` with every `${NAME}` in string values replaced from `env`, except under the dotted
    keys `later` names (resolved by whoever uses them: the platform API keys).

    An unset variable is recorded as `<key>: environment variable NAME is not set` and the
    value becomes `Unresolved`. Keys and non-string values are left alone.
    """
    if isinstance(tree, dict):
        return {k: substitute_env(v, env, problems, join(key, k), later) for k, v in tree.items()}
    if isinstance(tree, list):
        return [substitute_env(v, env, problems, f"{key}[{i}]", later) for i, v in enumerate(tree)]
    if not isinstance(tree, str) or "${" not in tree or later(key):
        return tree
    missing = [name for name in _ENV_REF.findall(tree) if name not in env]
    for name in dict.fromkeys(missing):
        problems.error(key, f"environment variable {name} is not set")
    if missing:
        return Unresolved(tree)
    return _ENV_REF.sub(lambda m: env[m.group(1)], tree)


def join(prefix: str, key: str) -> str:
    """Dotted key of `key` inside the table at `prefix` ("" for the top level)."""
    return f"{prefix}.{key}" if prefix else key


def describe(value: Any) -> str:
    """How a wrong value is shown in a message: `the string "x"`, `the integer 5`, `a table`."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the float {value}"
    if isinstance(value, str):
        return f"the string {quote(value)}"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, (datetime.date, datetime.time)):
        return "a date/time"
    return type(value).__name__


def quote(text: str) -> str:
    """A string as TOML/JSON would write it: `"x"`."""
    return json.dumps(text, ensure_ascii=False)


class Table:
    """One TOML table being read; `key` is its dotted key ("" for the document)."""

    def __init__(self, data: dict[str, Any], key: str, problems: Problems) -> None:
        self.data = data
        self.key = key
        self.problems = problems

    def sub(self, key: str) -> str:
        return join(self.key, key)

    def error(self, key: str, message: str) -> None:
        self.problems.error(self.sub(key) if key else self.key, message)

    def has(self, key: str) -> bool:
        return key in self.data

    def reject_unknown(self, allowed: Iterable[str]) -> None:
        """Record `unknown key` for every key not in `allowed` (with a close match as a hint)."""
        allowed = list(allowed)
        self.problems.keys[self.key] = tuple(allowed)
        for key in self.data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {quote(close[0])}?)" if close else ""
            self.error(key, f"unknown key{hint}")

    def _typed(self, key: str, expected: str, ok: Any) -> Any:
        """The raw value when `ok(value)` holds; None when absent, unresolved or wrong."""
        value = self.data.get(key)
        if value is None or isinstance(value, Unresolved):
            return None
        if not ok(value):
            self.error(key, f"expected {expected}, got {describe(value)}")
            return None
        return value

    def string(self, key: str, default: str | None = None, *, required: bool = False,
               allow_empty: bool = False) -> str | None:
        """A string value; empty strings are an error unless `allow_empty`."""
        if required and key not in self.data:
            self.error(key, "is required")
            return None
        value = self._typed(key, "a string", lambda v: isinstance(v, str))
        if value is None:
            return None if key in self.data else default
        if not value.strip() and not allow_empty:
            self.error(key, "must not be empty")
            return None
        return str(value)

    def choice(self, key: str, choices: Iterable[str], default: str | None = None) -> str | None:
        """A string that must be one of `choices` (listed in the message)."""
        choices = list(choices)
        self.problems.choices[self.sub(key)] = tuple(choices)
        value = self.string(key)
        if value is None:
            return None if key in self.data else default
        if value not in choices:
            self.error(key, f"expected one of {', '.join(choices)}; got {quote(value)}")
            return None
        return value

    def integer(self, key: str, default: int | None = None, *, minimum: int = 0,
                maximum: int | None = None) -> int | None:
        """An integer (booleans and floats refused) in [minimum, maximum]."""
        value = self._typed(key, "an integer",
                            lambda v: isinstance(v, int) and not isinstance(v, bool))
        if value is None:
            return None if key in self.data else default
        if maximum is not None and not minimum <= value <= maximum:
            self.error(key, f"must be between {minimum} and {maximum}, got {value}")
            return None
        if value < minimum:
            self.error(key, f"must be >= {minimum}, got {value}")
            return None
        return int(value)

    def number(self, key: str, default: float | None = None, *,
               positive: bool = False) -> float | None:
        """An integer or float >= 0 (> 0 when `positive`), returned as float."""
        value = self._typed(key, "a number", lambda v: isinstance(v, (int, float))
                            and not isinstance(v, bool))
        if value is None:
            return None if key in self.data else default
        if positive and not value > 0:
            self.error(key, f"must be > 0, got {value}")
            return None
        if not value >= 0:
            self.error(key, f"must be >= 0, got {value}")
            return None
        return float(value)

    def url(self, key: str, *, required: bool = False) -> str | None:
        """An absolute http:// or https:// URL with a host."""
        value = self.string(key, required=required)
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
            _ = parts.port  # raises ValueError when out of range
        except ValueError:
            valid = False
        if not valid:
            self.error(key, f"expected an http:// or https:// URL, got {quote(value)}")
            return None
        return value

    def boolean(self, key: str, default: bool | None = None) -> bool | None:
        value = self._typed(key, "true or false", lambda v: isinstance(v, bool))
        return default if value is None else value

    def strings(self, key: str, default: tuple[str, ...] | None = ()) -> tuple[str, ...] | None:
        """An array of non-empty strings (each bad item reported as `key[i]` and left out)."""
        items = self.indexed_strings(key)
        if items is None:
            return None if key in self.data else default
        return tuple(item for _, item in items)

    def indexed_strings(self, key: str) -> list[tuple[int, str]] | None:
        """The valid items of an array of strings with their index (None when absent/wrong)."""
        items = self._typed(key, "an array of strings", lambda v: isinstance(v, list))
        if items is None:
            return None
        result = []
        for i, item in enumerate(items):
            if isinstance(item, Unresolved):
                continue
            if not isinstance(item, str):
                self.error(f"{key}[{i}]", f"expected a string, got {describe(item)}")
            elif not item.strip():
                self.error(f"{key}[{i}]", "must not be empty")
            else:
                result.append((i, item))
        return result

    def table(self, key: str) -> Table | None:
        """The sub-table `key` (None when absent or not a table)."""
        value = self._typed(key, "a table", lambda v: isinstance(v, dict))
        return None if value is None else Table(value, self.sub(key), self.problems)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (`[[key]]`), each item keyed `key[i]`."""
        items = self._typed(key, "an array of tables", lambda v: isinstance(v, list))
        result = []
        for i, item in enumerate(items or ()):
            if isinstance(item, dict):
                result.append(Table(item, f"{self.sub(key)}[{i}]", self.problems))
            else:
                self.error(f"{key}[{i}]", f"expected a table, got {describe(item)}")
        return result

    def tables_by_name(self) -> list[tuple[str, Table]]:
        """Every value of this table as a named sub-table (`[agents.<name>]`)."""
        result = []
        for name in self.data:
            sub = self.table(name)
            if sub is not None:
                result.append((name, sub))
        return result


def read_toml(path: str, problems: Problems) -> dict[str, Any] | None:
    """The TOML file at `path` as plain Python values, or None (problem recorded).

    Unreadable file: key `(file)`; TOML syntax error: key `(syntax)` with the 1-based line and
    column in the message.
    """
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8")
    except OSError as exc:
        problems.error("(file)", f"cannot read file: {exc.strerror or exc}")
        return None
    except UnicodeDecodeError as exc:
        problems.error("(file)", f"not UTF-8 text (byte {exc.start})")
        return None
    try:
        return tomlkit.parse(text).unwrap()
    except TOMLKitError as exc:
        line, col = getattr(exc, "line", None), getattr(exc, "col", None)
        message = str(exc)
        if line is None or col is None:
            problems.error("(syntax)", f"invalid TOML: {message}")
        else:
            message = message.removesuffix(f" at line {line} col {col}")
            message = message.replace("Unexpected character: '\\x00'", "unexpected end of file")
            problems.error("(syntax)", f"invalid TOML at line {line}, column {col + 1}: {message}")
        return None
