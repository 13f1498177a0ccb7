"""`stickyroute serve` and `stickyroute stats`: run the proxy; print a running proxy's stats."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from stickyroute.config import check_config, load_config
from stickyroute.config.model import Config
from stickyroute.errors import ConfigError

DEFAULT_CONFIG = "config/proxy.toml"
DEFAULT_ADMIN_URL = "http://127.0.0.1:9090"


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `stickyroute serve`."""
    parser.add_argument("--config", required=True, help="path of the TOML config")
    parser.add_argument("--host", help="listen address (overrides server.host)")
    parser.add_argument("--port", type=int, help="listen port (overrides server.port)")
    parser.add_argument("--admin-port", type=int, help="admin listener port (overrides admin.port)")
    parser.add_argument("--record", metavar="FILE", help="append every inbound webhook to FILE (JSON lines)")
    parser.add_argument("--demo-agents", action="store_true",
                        help="also start a logging demo agent on every loopback agent URL")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="worker processes on one port (N > 1 needs [state] backend = \"redis\")")


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; exit 2 on a config error (every problem printed)."""
    from stickyroute.server.logs import configure_logging

    configure_logging()
    return _serve(args)


def _serve(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        return 2
    config = _overrides(args)(config)
    refusal = _workers_problem(args, config.state.shared)
    if refusal is not None:
        print(f"{config.path}: {refusal}", file=sys.stderr)
        return 2
    busy = _busy_addresses([(args.host or config.server.host, args.port or config.server.port),
                            (config.admin.host, config.admin.port)])
    if busy:
        for host, port in busy:
            print(f"stickyroute serve: cannot listen on {host}:{port}: address already in use "
                  "(another stickyroute? use --port / --admin-port, or change server.port / admin.port)",
                  file=sys.stderr)
        return 2
    recorder = None
    if args.record:
        from stickyroute.forwarding.recording import Recorder

        recorder = Recorder(args.record, config)
    if args.workers > 1:
        from stickyroute.server.workers import run_workers

        run_workers(config, args.workers, args.host, args.port, args.admin_port, args.record)
        return 0
    from stickyroute.server.run import serve

    with contextlib.suppress(KeyboardInterrupt):
        _run(serve(config, args.host, args.port, recorder=recorder, demo=args.demo_agents, adjust=_overrides(args)))
    return 0


def _overrides(args: argparse.Namespace) -> Callable[[Config], Config]:
    """The command line's overrides of a loaded config (`--admin-port`), applied again on reload."""

    def adjust(config: Config) -> Config:
        if args.admin_port:
            return replace(config, admin=replace(config.admin, port=args.admin_port))
        return config

    return adjust


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
    parser.add_argument("--config", help="config whose [admin] listener to ask "
                        "(default: config/proxy.toml when it exists, else http://127.0.0.1:9090)")
    parser.add_argument("--url", help="admin base URL (overrides the config), e.g. http://127.0.0.1:9090")
    parser.add_argument("--token", help=f"admin token (default: the config's [admin] token, else ${TOKEN_ENV})")


TOKEN_ENV = "STICKYROUTE_ADMIN_TOKEN"


def run_stats(args: argparse.Namespace) -> int:
    """Print the JSON of GET /stats from the admin listener; exit 1 when it cannot be reached."""
    base = args.url
    token = args.token
    path = args.config or (DEFAULT_CONFIG if os.path.exists(DEFAULT_CONFIG) else None)
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
