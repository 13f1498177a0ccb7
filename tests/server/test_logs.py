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


def _json_line(record: logging.LogRecord) -> dict[str, object]:
    import json

    from stickyroute.server.logs import JsonFormatter

    return json.loads(JsonFormatter().format(record))


def test_json_format_has_time_level_logger_message_and_the_extra_fields():
    record = _record(1_796_112_043.125, "config reloaded from %s")
    record.args = ("/etc/stickyroute.toml",)
    record.__dict__["dropped"] = 3
    assert _json_line(record) == {"time": "2026-12-01T08:00:43.125Z", "level": "INFO", "logger": "stickyroute.decision",
                                  "message": "config reloaded from /etc/stickyroute.toml", "dropped": 3}


def test_json_format_merges_structured_fields_and_names_the_event():
    record = _record(1_796_112_043.5, '{"channel": "telegram"}')
    record.__dict__.update(event="decision", fields={"channel": "telegram", "agent": "coder", "status": 200,
                                                     "level": "not this one"})
    assert _json_line(record) == {"time": "2026-12-01T08:00:43.500Z", "level": "INFO", "logger": "stickyroute.decision",
                                  "message": "decision", "channel": "telegram", "agent": "coder", "status": 200}


def test_json_format_drops_uvicorns_colour_copy_and_keeps_the_exception_text():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = logging.LogRecord("uvicorn.error", logging.ERROR, __file__, 1, "Exception in ASGI application",
                                   None, sys.exc_info())
    record.created, record.msecs = 1_796_112_043.0, 0
    record.__dict__["color_message"] = "\x1b[31mException\x1b[0m"
    line = _json_line(record)
    assert (line["level"], line["logger"], line["message"], "color_message" in line) == (
        "ERROR", "uvicorn.error", "Exception in ASGI application", False)
    assert str(line["exc_info"]).endswith("ValueError: boom")
