"""`stickyroute serve` and `stickyroute stats`: run the proxy; print a running proxy's stats."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
from typing import Any

import httpx

from stickyroute.config import check_config
from stickyroute.config.choices import LOG_FORMATS, LOG_LEVELS
from stickyroute.config.overrides import Overrides

DEFAULT_CONFIG = "stickyroute.toml"
"""The config `serve` and `stats` look for in the current folder without `--config` (`init` writes it)."""
DEMO_CONFIG = "config/proxy.toml"
"""In a clone of the repository: the shipped demo config (`make run`), `stats`' second choice."""
DEFAULT_ADMIN_URL = "http://127.0.0.1:9090"
EXIT_OK = 0
EXIT_INVALID = 2


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `stickyroute serve`."""
    parser.add_argument("--config", help=f"path of the TOML config (default: ./{DEFAULT_CONFIG})")
    parser.add_argument("--host", help="listen address (overrides server.host)")
    parser.add_argument("--port", type=int, help="listen port (overrides server.port)")
    parser.add_argument("--admin-port", type=int, help="admin listener port (overrides admin.port)")
    parser.add_argument("--record", metavar="FILE", help="append every inbound webhook to FILE (JSON lines)")
    parser.add_argument("--demo-agents", action="store_true",
                        help="also start a logging demo agent on every loopback agent URL")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="worker processes on one port (N > 1 needs [state] backend = \"redis\")")
    parser.add_argument("--log-format", choices=LOG_FORMATS, help="text or json lines on stderr (overrides "
                        "server.log_format; default text)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, help="least severe records written (overrides "
                        "server.log_level; default info)")


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit 2 on a config error (every problem printed, no traceback)
    or without a config to serve (what to do printed)."""
    path = args.config or _default_config()
    if path is None:
        print(NO_CONFIG, file=sys.stderr)
        return EXIT_INVALID
    config, problems = check_config(path)
    errors = [p for p in problems if not p.warning]
    if config is None or errors:
        for problem in errors:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    overrides = Overrides(args.host, args.port, args.admin_port, args.log_format, args.log_level)
    running = overrides.apply(config)
    from stickyroute.server.logs import configure_logging

    configure_logging(running.server.log_format, running.server.log_level, supervisor=args.workers > 1)
    for problem in problems:
        logging.getLogger("stickyroute.config").warning("config warning: %s", problem)
    refusal = _workers_problem(args, config.state.shared)
    if refusal is not None:
        print(f"{config.path}: {refusal}", file=sys.stderr)
        return EXIT_INVALID
    busy = _busy_addresses([(running.server.host, running.server.port), (running.admin.host, running.admin.port)])
    if busy:
        for host, port in busy:
            print(f"stickyroute serve: cannot listen on {host}:{port}: address already in use "
                  "(another stickyroute? use --port / --admin-port, or change server.port / admin.port)",
                  file=sys.stderr)
        return EXIT_INVALID
    recorder = None
    if args.record:
        from stickyroute.forwarding.recording import Recorder

        recorder = Recorder(args.record, config)
    if args.workers > 1:
        from stickyroute.server.workers import run_workers

        run_workers(config, args.workers, overrides, args.record)
        return EXIT_OK
    from stickyroute.server.run import serve

    with contextlib.suppress(KeyboardInterrupt):
        _run(serve(config, recorder=recorder, demo=args.demo_agents, overrides=overrides))
    return EXIT_OK


NO_CONFIG = f"""stickyroute serve: no config to serve: there is no ./{DEFAULT_CONFIG} here. Either
  stickyroute init                 write a starter ./{DEFAULT_CONFIG} (and the rule packs it uses) in this folder,
                                   then edit it and run `stickyroute serve` again, or
  stickyroute serve --config PATH  serve the config at PATH."""


def _default_config() -> str | None:
    """./stickyroute.toml when it exists, else None."""
    return DEFAULT_CONFIG if os.path.isfile(DEFAULT_CONFIG) else None


def _workers_problem(args: argparse.Namespace, shared_state: bool) -> str | None:
    """Why `--workers` cannot be served with this config, or None."""
    if args.workers < 1:
        return f"--workers must be at least 1, got {args.workers}"
    if args.workers == 1:
        return None
    if not shared_state:
        return (f'state.backend: --workers {args.workers} needs backend = "redis": with "memory" every worker '
                "process keeps its own routes and delivery log, so a conversation would change agent from one "
                "message to the next and a platform retry reaching another worker would be forwarded twice")
    if args.demo_agents:
        return "--demo-agents runs with one worker (start the demo agents with `make run` apart)"
    return None


def _run(main: Any) -> None:
    """Run the server coroutine on uvloop when installed (uvicorn[standard] brings it), as
    `uvicorn.run` would; else on asyncio's default loop."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main)


def _busy_addresses(addresses: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The (host, port) pairs another process already listens on."""
    busy = []
    for host, port in addresses:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError:
                busy.append((host, port))
    return busy


def add_stats_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `stickyroute stats`."""
    parser.add_argument("--config", help="config whose [admin] listener to ask (default: ./stickyroute.toml, else "
                        "config/proxy.toml, when one exists; else http://127.0.0.1:9090)")
    parser.add_argument("--url", help="admin base URL (overrides the config), e.g. http://127.0.0.1:9090")
    parser.add_argument("--token", help=f"admin token (default: the config's [admin] token, else ${TOKEN_ENV})")


TOKEN_ENV = "STICKYROUTE_ADMIN_TOKEN"


def run_stats(args: argparse.Namespace) -> int:
    """Print the JSON of GET /stats from the admin listener; exit 1 when it cannot be reached."""
    base = args.url
    token = args.token
    path = args.config or next((p for p in (DEFAULT_CONFIG, DEMO_CONFIG) if os.path.exists(p)), None)
    if path is not None and (base is None or token is None):
        config, problems = check_config(path)  # quietly: warnings are `check`'s business
        if config is None:
            for problem in problems:
                if not problem.warning:
                    print(problem, file=sys.stderr)
            return 2
        base = base or f"http://{config.admin.host}:{config.admin.port}"
        token = token or config.admin.token
    base = base or DEFAULT_ADMIN_URL
    token = token or os.environ.get(TOKEN_ENV)
    headers = {"authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(base.rstrip("/") + "/stats", headers=headers, timeout=5.0)
        if response.status_code == 401:
            print(f"stickyroute stats: {base}/stats: 401 {response.json().get('hint', '')}", file=sys.stderr)
            return 1
        response.raise_for_status()
    except httpx.HTTPError as exc:
        print(f"stickyroute stats: cannot read {base}/stats: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(response.json(), indent=2, sort_keys=True))
    return 0
