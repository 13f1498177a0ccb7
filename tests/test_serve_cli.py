"""`stickyroute serve` refuses clearly when its ports are taken; `stickyroute stats` reads /stats."""

from __future__ import annotations

import socket

from stickyroute.cli.main import main
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


def test_stats_sends_the_configs_admin_token_and_says_when_it_is_refused(tmp_path, capsys):
    from stickyroute.server.service import Service
    from tests.upstreams import serve_app

    token = "cli-admin-token-0123456789"
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, top=f'[admin]\ntoken = "{token}"\n')
        service = Service(config, env={})
        with serve_app(service.admin_app(), lifespan="off") as admin:
            port = int(admin.rsplit(":", 1)[1])
            (tmp_path / "cli").mkdir()
            with_token = write_config(tmp_path / "cli", ups, top=f'[admin]\nport = {port}\ntoken = "{token}"\n')
            shown = main(["stats", "--config", with_token.path])
            out = capsys.readouterr().out
            refused = main(["stats", "--url", admin, "--token", "wrong-token-0123456789"])
            err = capsys.readouterr().err
    assert (shown, refused) == (0, 1)
    assert '"routes"' in out and '"telegram": 0' in out
    assert err == (f"stickyroute stats: {admin}/stats: 401 send Authorization: Bearer <token> with the [admin] "
                   "token of the running config\n")
