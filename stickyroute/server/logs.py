"""Logging of the running proxy: one format for every logger of every process, on standard error.

    configure_logging(log_format="text", level="info", supervisor=False)   once per process

Formats (`[server] log_format`, `serve --log-format`):
- `text`: `%(asctime)s %(levelname)s %(name)s: %(message)s`, one line per record (a decision
  line's message is its JSON object).
- `json`: one JSON object per line (python-json-logger with orjson): `time` (UTC, ISO 8601 with
  milliseconds and a Z), `level`, `logger`, `message`, then the record's structured fields. A
  record carries them as `extra={"fields": {...}}` (merged at the top level, never replacing the
  four above) and may name itself with `extra={"event": "decision"}` (then `message` is that name
  instead of the formatted text). Exceptions come as `exc_info` text.

Every process writes through the root logger's one handler: `serve`, and with `--workers` the
parent and each worker. uvicorn's loggers are not given handlers of their own (every
`uvicorn.Config` is made with `log_config=None`), so its lines come in the same format; its
per-listener start-up lines ("Started server process", "Uvicorn running on ...") are written only
at `debug` (the startup line says the same once), except in the `--workers` parent
(`supervisor=True`), whose uvicorn lines are the supervisor's own news (a worker died, restarts).

Per-record thread/process/caller look-ups are off (Python logging HOWTO, "Optimization"), and the
text format's `asctime` is formatted once per second (`SecondFormatter`). Measured: a
`QueueHandler` with a listener thread costs more CPU per request than writing directly, so
records are written by the handler directly.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.orjson import OrjsonFormatter

__all__ = ["FORMAT", "JsonFormatter", "SecondFormatter", "configure_logging", "level_number"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s"
_RENAMED = {"asctime": "time", "levelname": "level", "name": "logger"}
_BASE_KEYS = frozenset(("time", "level", "logger", "message"))
_UVICORN_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.asgi", "uvicorn.access")


def level_number(name: str) -> int:
    """`debug|info|warning|error` (any case) as a `logging` level number."""
    return logging.getLevelNamesMapping()[name.upper()]


class SecondFormatter(logging.Formatter):
    """`logging.Formatter` whose default `asctime` ("2026-12-01 08:20:43,123", local time) reuses
    the date and time text within one second; an explicit `datefmt` is formatted as usual."""

    _cached: tuple[int, str] = (-1, "")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        cached = self._cached
        if cached[0] != second:
            cached = self._cached = (second, time.strftime(self.default_time_format, self.converter(record.created)))
        msec_format = self.default_msec_format
        return msec_format % (cached[1], record.msecs) if msec_format else cached[1]


class JsonFormatter(OrjsonFormatter):
    """One JSON object per record: time, level, logger, message and the structured fields (see
    the module docstring)."""

    _cached: tuple[int, str] = (-1, "")

    def __init__(self) -> None:
        super().__init__(_JSON_FIELDS, rename_fields=_RENAMED,
                         reserved_attrs=[*RESERVED_ATTRS, "color_message", "fields", "event", "taskName"])

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """UTC, ISO 8601 with milliseconds: `2026-12-01T08:20:43.123Z` (the second's text cached)."""
        second = int(record.created)
        cached = self._cached
        if cached[0] != second:
            cached = self._cached = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        return f"{cached[1]}.{int(record.msecs):03d}Z"

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_data, record, message_dict)
        event = record.__dict__.get("event")
        if isinstance(event, str):
            log_data["message"] = event
        fields = record.__dict__.get("fields")
        if isinstance(fields, dict):
            for key, value in fields.items():
                if key not in _BASE_KEYS:
                    log_data[key] = value


def configure_logging(log_format: str = "text", level: str = "info", *, supervisor: bool = False) -> None:
    """Records at `level` and above to standard error in `log_format` (`text` or `json`).

    A root logger that already has handlers is left alone (as `logging.basicConfig` does: an
    embedding application's, or pytest's). `supervisor`: the `--workers` parent, whose uvicorn
    lines are written at `level` too (see the module docstring).
    """
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else SecondFormatter(FORMAT))
    number = level_number(level)
    logging.basicConfig(level=number, handlers=[handler])
    logging.getLogger("httpx").setLevel(max(number, logging.WARNING))
    uvicorn_level = number if supervisor or number <= logging.DEBUG else max(number, logging.WARNING)
    for name in _UVICORN_LOGGERS:
        uvicorn_logger = logging.getLogger(name)
        uvicorn_logger.handlers.clear()  # a uvicorn.Config made with its default log_config added its own
        uvicorn_logger.propagate = True
        uvicorn_logger.setLevel(uvicorn_level)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # skip findCaller (documented knob)
