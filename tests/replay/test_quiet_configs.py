"""`explain`, `replay` and `learn` read a config without repeating its warnings (a new user saw them
on every call, twice on a recording replay): warnings are `check`'s and `serve`'s business."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from stickyroute.replay import cli as replay_cli
from stickyroute.replay import explain as explain_module

WARNED = """
[agents.support]
url = "http://127.0.0.1:9102"
keywords = ["invoice"]
[channels.telegram]
default_agent = "support"
"""


def test_explain_prints_no_config_warning(tmp_path: Path, caplog, capsys) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(WARNED)
    caplog.set_level(logging.WARNING)
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    assert explain_module.run(parser.parse_args(["--config", str(path), "--channel", "telegram",
                                                 "--text", "my invoice"])) == 0
    assert [r.getMessage() for r in caplog.records] == []
    assert "warning" not in capsys.readouterr().err


def test_replay_loads_its_configs_quietly(tmp_path: Path, caplog) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(WARNED)
    caplog.set_level(logging.WARNING)
    config = replay_cli._load_config(str(path))
    assert (config.channels["telegram"].default_agent, [r.getMessage() for r in caplog.records]) == ("support", [])
