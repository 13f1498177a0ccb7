#!/usr/bin/env bash
# Serve stickyroute for ../shared/proxy-bench's `custom` config: routing path active.
#
#   bench/proxy_bench_cmd.sh PORT UPSTREAM_URL
#
#   PROXY_NAME=stickyroute PROXY_CMD='/work/main/bench/proxy_bench_cmd.sh {port} {upstream}' \
#       ./run.sh nginx starlette custom
#
# Writes a config (temp dir) with one Telegram channel on /webhook/bench (proxy-bench's REQ_PATH),
# no secret_token (run.sh's readiness POST sends none; the check costs ~0.3 % of a request), auto_route = "sticky_heuristic", six agents with
# keywords all pointing at UPSTREAM_URL, classifier "heuristic" (no network), admin on a free
# loopback port; then execs `stickyroute serve` (so the harness stops the proxy by this PID).
# STICKYROUTE_BIN overrides the executable (default: the repo's .venv/bin/stickyroute).
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
import sys, pathlib
sys.path.insert(0, sys.argv[1])
import run
text = run.CONFIG.format(port=sys.argv[3], admin=sys.argv[4], up=sys.argv[5], path="/webhook/bench", secret="x")
# no secret_token: run.sh checks readiness with a plain POST (no X-Telegram-Bot-Api-Secret-Token)
text = "\n".join(l for l in text.splitlines() if not l.startswith("secret_token"))
pathlib.Path(sys.argv[2]).write_text(text + "\n")
' "$HERE" "$DIR/proxy.toml" "$PORT" "$ADMIN" "$UPSTREAM"
exec "$BIN" serve --config "$DIR/proxy.toml" --host "${PROXY_HOST:-127.0.0.1}" --port "$PORT"
