"""Logging of the running proxy: one line per record on stderr.

    configure_logging()    call once at start (like `logging.basicConfig`)

Format `%(asctime)s %(levelname)s %(name)s: %(message)s`; per-record thread/process/caller
look-ups are off (Python logging HOWTO, "Optimization"), and `asctime` is formatted once per
second (`SecondFormatter`: the same text as `logging.Formatter`'s, without a `localtime` and a
`strftime` per line). Measured: a `QueueHandler` with a
listener thread costs more CPU per request than writing directly (the thread hand-off outweighs
the write), so records are written by the handler directly.
"""

from __future__ import annotations

import logging
import time

__all__ = ["FORMAT", "SecondFormatter", "configure_logging"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


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


def configure_logging(level: int = logging.INFO) -> None:
    """INFO lines to stderr; a root logger that already has handlers is left alone (as
    `logging.basicConfig` does: an embedding application's, or pytest's)."""
    handler = logging.StreamHandler()
    handler.setFormatter(SecondFormatter(FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # skip findCaller (documented knob)
