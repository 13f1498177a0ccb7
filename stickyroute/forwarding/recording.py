"""`stickyroute serve --record FILE`: append every inbound webhook to a JSON Lines file.

File shape (one JSON object a line, UTF-8):

    {"recording": "stickyroute", "version": 2, "config": "/abs/path/proxy.toml"}   first line only
    {"time": 1767600000.0, "channel": "telegram", "method": "POST", "path": "/telegram",
     "query": "a=1", "headers": [["content-type", "application/json"], ...],
     "body": "<utf-8 text>",                   or "body_b64": "<base64>" when not UTF-8
     "decisions": [{"agent": "billing", "reason": "classified"}, ...]}

`time` is the dispatcher's `now` (seconds) when the request arrived. `decisions` (version 2)
holds one object per envelope of the body, in body order (the order `stickyroute.channels.parse`
returns): the agent and reason the router decided (a redelivery: the first decision; an item
the dispatcher kept no decision for, such as a WhatsApp account event without an id:
`{"agent": null, "reason": null}`); `[]` for a GET or an unparsed body. The recorder is called
by `Dispatcher.handle` once the request is answered (after authentication), so lines are in
order of completion: readers sort by `time` (stickyroute/replay/recorded.py).

Version 1 files (no `decisions`, a config path as given on the command line) still replay; a
relative config path is resolved against the recording file's folder. Version 2 writes the
config path absolute, so a recording replays from any directory.

Secret headers are dropped (`SECRET_HEADERS`, and every `x-hub-signature*`): a recording can be
shared without leaking credentials; it does hold message text, so treat it as personal data.
`stickyroute replay FILE --config NEW` plays it back; `stickyroute learn FILE` learns keywords
from its decisions (stickyroute/learn/).
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Sequence
from typing import Any

from stickyroute.config.model import Config
from stickyroute.forwarding.inbound import Inbound
from stickyroute.routing.engine import Decision

FORMAT = "stickyroute"
VERSION = 2
SECRET_HEADERS = frozenset({"x-telegram-bot-api-secret-token", "authorization", "cookie", "proxy-authorization"})


def is_secret(name: str) -> bool:
    """True for a header that must not be written (case-insensitive)."""
    lowered = name.lower()
    return lowered in SECRET_HEADERS or lowered.startswith("x-hub-signature")


def record_line(inbound: Inbound, channel: str | None, now: float,
                decisions: Sequence[Decision | None] | None = None) -> dict[str, Any]:
    """The JSON object written for one inbound request (`decisions`: see the module docstring;
    None leaves the key out)."""
    line: dict[str, Any] = {
        "time": now,
        "channel": channel,
        "method": inbound.method,
        "path": inbound.path,
        "query": inbound.query.decode("latin-1"),
        "headers": [[k.decode("latin-1"), v.decode("latin-1")] for k, v in inbound.headers
                    if not is_secret(k.decode("latin-1"))],
    }
    try:
        line["body"] = inbound.body.decode("utf-8")
    except UnicodeDecodeError:
        line["body_b64"] = base64.b64encode(inbound.body).decode("ascii")
    if decisions is not None:
        line["decisions"] = [{"agent": d.agent if d else None, "reason": d.reason if d else None} for d in decisions]
    return line


def body_of(line: dict[str, Any]) -> bytes:
    """The original body bytes of a recorded line."""
    if "body_b64" in line:
        return base64.b64decode(line["body_b64"])
    return str(line.get("body", "")).encode("utf-8")


class Recorder:
    """Callable `recorder(inbound, now, decisions=None)` appending one line per request to `path`.

    Writes the header line first when the file is new or empty (the config path made absolute).
    Each line is written and flushed whole under a lock (one writer per process).
    """

    def __init__(self, path: str, config: Config) -> None:
        self.path = path
        self.config = config
        self._lock = threading.Lock()
        self._handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by `close`)
        if os.path.getsize(path) == 0:
            self._write({"recording": FORMAT, "version": VERSION, "config": os.path.abspath(config.path)})

    def _write(self, obj: dict[str, Any]) -> None:
        with self._lock:
            self._handle.write(json.dumps(obj, ensure_ascii=False) + "\n")
            self._handle.flush()

    def __call__(self, inbound: Inbound, now: float, decisions: Sequence[Decision | None] | None = None) -> None:
        channel = self.config.channel_for_path(inbound.path)
        self._write(record_line(inbound, channel.name if channel is not None else None, now, decisions))

    def close(self) -> None:
        """Close the file (further calls raise ValueError)."""
        self._handle.close()
