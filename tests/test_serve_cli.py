"""`stickyroute serve` refuses clearly when its ports are taken; `stickyroute stats` reads /stats."""

from __future__ import annotations

import socket

from proxy.cli.main import main
from tests.proxy.harness import upstream_set, write_config


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_reports_a_busy_port_and_exits_2(tmp_path, capsys):
    admin = _free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with upstream_set("general") as ups:
            write_config(tmp_path, ups, top=f'[server]\nhost = "127.0.0.1"\nport = {port}\n[admin]\nport = {admin}\n')
        code = main(["serve", "--config", str(tmp_path / "proxy.toml")])
    assert code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"stickyroute serve: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another stickyroute? use --port / --admin-port, or change server.port / admin.port)"]


def test_stats_says_when_the_admin_listener_is_unreachable(capsys):
    port = _free_port()
    assert main(["stats", "--url", f"http://127.0.0.1:{port}"]) == 1
    assert capsys.readouterr().err.startswith(f"stickyroute stats: cannot read http://127.0.0.1:{port}/stats:")
