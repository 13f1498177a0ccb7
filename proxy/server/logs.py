"""Logging of the running proxy: one line per record on stderr.

    configure_logging()    call once at start (like `logging.basicConfig`)

Format `%(asctime)s %(levelname)s %(name)s: %(message)s`; per-record thread/process/caller
look-ups are off (Python logging HOWTO, "Optimization"). Measured: a `QueueHandler` with a
listener thread costs more CPU per request than writing directly (the thread hand-off outweighs
the write), so records are written by the handler directly.
"""

from __future__ import annotations

import logging

__all__ = ["FORMAT", "configure_logging"]

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(level: int = logging.INFO) -> None:
    """INFO lines to stderr; a root logger that already has handlers is left alone (as
    `logging.basicConfig` does: an embedding application's, or pytest's)."""
    logging.basicConfig(level=level, format=FORMAT)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # skip findCaller (documented knob)
