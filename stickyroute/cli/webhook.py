"""`stickyroute webhook set|info|delete CHANNEL`: register a channel's webhook with its platform.

    stickyroute webhook set CHANNEL --url https://host/path [--drop-pending-updates] [--max-connections N]
                                    [--allowed-updates A,B] [--fields A,B]
    stickyroute webhook info CHANNEL
    stickyroute webhook delete CHANNEL [--drop-pending-updates]
    (each with [--config PATH] [--api-base URL])

The config (default ./stickyroute.toml) names the channel, its platform and its credentials
(`bot_token`; `app_id`, `access_token`), whose `${VAR}`s are read from the environment now; the
registrars are in `stickyroute.webhooks`. `--api-base` replaces the platform API's base URL (a
Bot API server of your own, a test server). Credentials are never printed.

Exit 0; 1 when the platform refused or could not be reached; 2 for a config problem (a missing
credential names its key).
"""

from __future__ import annotations

import argparse
import os
import sys

import httpx

from stickyroute.config import check_config
from stickyroute.errors import WebhookError
from stickyroute.webhooks import CredentialMissing, SetOptions, Target, registrar
from stickyroute.webhooks.base import TIMEOUT_S

EXIT_OK = 0
EXIT_PLATFORM = 1
EXIT_INVALID = 2
DEFAULT_CONFIG = "stickyroute.toml"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("channel", metavar="CHANNEL", help="the channel's name in the config ([channels.NAME])")
    parser.add_argument("--config", default=DEFAULT_CONFIG, help=f"the config file (default ./{DEFAULT_CONFIG})")
    parser.add_argument("--api-base", metavar="URL", help="the platform API's base URL (default: the platform's own, "
                        "e.g. https://api.telegram.org, https://graph.facebook.com/v21.0)")


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`webhook set|info|delete`."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    set_parser = actions.add_parser("set", help="point the platform's webhook at stickyroute",
                                    description="point the platform's webhook at stickyroute")
    _common(set_parser)
    set_parser.add_argument("--url", required=True, help="the public HTTPS URL of the channel's path, "
                            "e.g. https://bots.example.com/telegram")
    set_parser.add_argument("--drop-pending-updates", action="store_true",
                            help="Telegram: drop the updates waiting for delivery")
    set_parser.add_argument("--max-connections", type=int, metavar="N",
                            help="Telegram: parallel requests, 1-100 (default 40, at most the smallest agent pool)")
    set_parser.add_argument("--allowed-updates", type=_names, metavar="A,B",
                            help="Telegram: the update kinds to receive (default: every kind stickyroute routes)")
    set_parser.add_argument("--fields", type=_names, metavar="A,B",
                            help="Meta: the webhook fields to subscribe (default: messages)")
    info_parser = actions.add_parser("info", help="show the platform's webhook (pending updates, last error)",
                                     description="show the platform's webhook (pending updates, last error)")
    _common(info_parser)
    delete_parser = actions.add_parser("delete", help="remove the platform's webhook",
                                       description="remove the platform's webhook")
    _common(delete_parser)
    delete_parser.add_argument("--drop-pending-updates", action="store_true",
                               help="Telegram: drop the updates waiting for delivery")


def run(args: argparse.Namespace) -> int:
    """Run the action; print its lines (stdout) or what went wrong (stderr)."""
    config, problems = check_config(args.config)
    errors = [p for p in problems if not p.warning]
    if config is None or errors:
        for problem in errors:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    channel = config.channels.get(args.channel)
    if channel is None:
        print(f"stickyroute webhook: no channel {args.channel!r} in {args.config} (channels: "
              f"{', '.join(config.channels)})", file=sys.stderr)
        return EXIT_INVALID
    platform = registrar(channel.type.value)
    with httpx.Client(timeout=TIMEOUT_S, follow_redirects=False) as client:
        target = Target(config, channel, os.environ, client, args.api_base)
        try:
            if args.action == "set":
                lines = platform.set(target, SetOptions(args.url, args.max_connections, args.drop_pending_updates,
                                                        args.allowed_updates, args.fields))
            elif args.action == "info":
                lines = platform.info(target)
            else:
                lines = platform.delete(target, args.drop_pending_updates)
        except CredentialMissing as exc:
            print(exc.problem, file=sys.stderr)
            return EXIT_INVALID
        except WebhookError as exc:
            print(f"stickyroute webhook {args.action}: {target.scrub(str(exc))}", file=sys.stderr)
            return EXIT_PLATFORM
    for line in lines:
        print(target.scrub(line))
    return EXIT_OK
