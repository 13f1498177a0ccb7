#!/usr/bin/env bash
# Serve stickyroute for ../shared/proxy-bench's `custom` config: routing path active.
#
#   bench/proxy_bench_cmd.sh PORT UPSTREAM_URL                 make bench's config (REQ_PATH=/webhook/bench)
#   SHIPPED=1 bench/proxy_bench_cmd.sh PORT UPSTREAM_URL       config/proxy.toml (REQ_PATH=/telegram)
#
#   PROXY_NAME=stickyroute PROXY_CMD='/work/main/bench/proxy_bench_cmd.sh {port} {upstream}' \
#       ./run.sh nginx starlette custom
#   SHIPPED=1 REQ_PATH=/telegram PROXY_NAME=shipped PROXY_CMD='/work/main/bench/proxy_bench_cmd.sh {port} {upstream}' \
#       ./run.sh nginx custom
#
# make bench's config: one Telegram channel on /webhook/bench, no secret_token (run.sh's readiness
# POST sends none; the check costs ~0.3 % of a request), auto_route = "sticky_heuristic", six
# agents with keywords all pointing at UPSTREAM_URL, classifier "heuristic" (no network).
# SHIPPED=1: the shipped config/proxy.toml as is (its bindings, thread routes, rules files and
# keyword classifier), every agent's url pointed at UPSTREAM_URL. Both: admin on a free loopback
# port, the config in a temp dir, then exec `stickyroute serve` (so the harness stops the proxy
# by this PID). STICKYROUTE_BIN overrides the executable (default: the repo's .venv/bin/stickyroute).
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 PORT UPSTREAM_URL" >&2; exit 2; }
PORT=$1
UPSTREAM=${2%/}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=${STICKYROUTE_BIN:-$HERE/../.venv/bin/stickyroute}
PY=$(dirname "$BIN")/python
DIR=$(mktemp -d /tmp/stickyroute-proxybench.XXXXXX)
ADMIN=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -c '
import os, sys, pathlib
import tomlkit
sys.path.insert(0, sys.argv[1])
import run
here, out, port, admin, upstream = sys.argv[1:6]
if os.environ.get("SHIPPED") == "1":
    shipped = pathlib.Path(here).parent / "config" / "proxy.toml"
    doc = tomlkit.parse(shipped.read_text())
    for agent in doc["agents"].values():
        agent["url"] = upstream
        if "rules" in agent and not str(agent["rules"]).startswith("builtin:"):  # a path: relative to the shipped file
            agent["rules"] = str((shipped.parent / str(agent["rules"])).resolve())
    doc["server"]["port"] = int(port)
    doc["admin"]["port"] = int(admin)
    text = tomlkit.dumps(doc)
else:
    text = run.CONFIG.format(port=port, admin=admin, up=upstream, path="/webhook/bench", secret="x",
                             admin_token=run.ADMIN_TOKEN)
    # no secret_token: run.sh checks readiness with a plain POST (no X-Telegram-Bot-Api-Secret-Token)
    text = "\n".join(l for l in text.splitlines() if not l.startswith("secret_token"))
pathlib.Path(out).write_text(text + "\n")
' "$HERE" "$DIR/proxy.toml" "$PORT" "$ADMIN" "$UPSTREAM"
exec "$BIN" serve --config "$DIR/proxy.toml" --host "${PROXY_HOST:-127.0.0.1}" --port "$PORT"
