"""The log line format of the running proxy (stickyroute/server/logs.py)."""

from __future__ import annotations

import logging

from stickyroute.server.logs import FORMAT, SecondFormatter


def _record(created: float, message: str = "hello") -> logging.LogRecord:
    record = logging.LogRecord("stickyroute.decision", logging.INFO, __file__, 1, message, None, None)
    record.created = created
    record.msecs = int((created - int(created)) * 1000)
    return record


def test_second_formatter_writes_exactly_what_logging_formatter_writes():
    plain, cached = logging.Formatter(FORMAT), SecondFormatter(FORMAT)
    for created in (1_796_112_043.123, 1_796_112_043.999, 1_796_112_044.0, 1_796_112_044.5, 1_796_115_600.25):
        record = _record(created)
        assert cached.format(record) == plain.format(_record(created))


def test_second_formatter_reuses_the_text_within_a_second_and_renews_it_after():
    formatter = SecondFormatter(FORMAT)
    first = formatter.formatTime(_record(1_796_112_043.125))
    again = formatter.formatTime(_record(1_796_112_043.75))
    later = formatter.formatTime(_record(1_796_112_044.5))
    assert first[:-4] == again[:-4] and first[-3:] == "125" and again[-3:] == "750"
    assert later[:-4] != first[:-4] and later[-3:] == "500"
    assert formatter.formatTime(_record(1_796_112_043.1), "%Y") == logging.Formatter().formatTime(
        _record(1_796_112_043.1), "%Y")
