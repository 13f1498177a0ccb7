"""The shipped Grafana dashboard (docs/grafana/stickyroute.json) queries only what the proxy
exports: every metric an expression or a variable names is a series of the service's registry,
every label it groups or filters by is a label of that metric, and every exported metric is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stickyroute.clock import FakeClock
from stickyroute.server.service import Service
from tests.proxy.harness import write_config

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "stickyroute.json"
METRIC = re.compile(r"\bstickyroute_[a-z_]+\b")
GROUPING = re.compile(r"\bby \(([^)]*)\)")
MATCHERS = re.compile(r"\{([^}]*)\}")
_SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created"),
             "info": ("_info",), "gauge": ("",)}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Every sample name the service can export -> its label names (from the registry's families)."""
    ups = {name: SimpleNamespace(url=f"http://127.0.0.1:{9 + i}") for i, name in enumerate(("general", "coder"))}
    config = write_config(tmp_path_factory.mktemp("grafana"), ups)  # type: ignore[arg-type]
    service = Service(config, env={}, clock=FakeClock(0.0))
    out: dict[str, set[str]] = {}
    for collector in list(service.registry._collector_to_names):
        labels = set(getattr(collector, "_labelnames", ()))
        for family in collector.describe():
            for suffix in _SUFFIXES[family.type]:
                out[family.name + suffix] = labels | ({"le"} if suffix == "_bucket" else set()) | (
                    {"hash", "path"} if family.type == "info" else set())
    return out


def queries(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, expression) of every panel target and every query variable."""
    found = [(f"panel {panel['title']!r}", target["expr"]) for panel in document["panels"]
             for target in panel.get("targets", ())]
    found += [(f"variable {v['name']!r}", v["definition"]) for v in document["templating"]["list"] if v["type"] == "query"]
    return found


DOCUMENT = json.loads(DASHBOARD.read_text())


FAMILIES = {  # README "Every request accounted for", the metrics table
    "stickyroute_requests": {"channel", "agent", "reason", "status"},
    "stickyroute_decisions": {"channel", "reason"}, "stickyroute_switches": {"channel", "reason"},
    "stickyroute_upstream_latency_seconds": {"agent"}, "stickyroute_upstream_failures": {"agent", "kind"},
    "stickyroute_conversations_live": {"channel"}, "stickyroute_delivery_log_size": set(),
    "stickyroute_delivery_log_hits": {"channel"},
    "stickyroute_classifier_calls": {"channel", "provider", "outcome"},
    "stickyroute_classifier_failures": {"channel", "provider", "kind"},
    "stickyroute_classifier_skips": {"channel", "reason"}, "stickyroute_classifier_unmatched_answers": {"channel", "provider"},
    "stickyroute_classifier_tokens": {"channel", "provider", "type"},
    "stickyroute_classifier_latency_seconds": {"channel", "provider"},
    "stickyroute_state_backend_up": {"backend"}, "stickyroute_state_fallbacks": {"operation", "cause"},
    "stickyroute_config": {"hash", "path"},
    "stickyroute_config_loaded_timestamp_seconds": set(), "stickyroute_config_reloads": {"result"},
}


def family(name: str) -> str:
    return re.sub(r"_(total|created|bucket|count|sum|info)$", "", name)


def test_the_registry_exports_the_families_the_readme_lists(exported) -> None:
    assert {family(name): labels - {"le"} for name, labels in exported.items()} == FAMILIES


@pytest.mark.parametrize(("where", "expr"), queries(DOCUMENT), ids=[w for w, _e in queries(DOCUMENT)])
def test_every_query_names_exported_metrics_and_their_labels(exported, where, expr) -> None:
    metrics = set(METRIC.findall(expr))
    assert metrics, f"{where}: names no stickyroute metric"
    assert metrics <= set(exported), f"{where}: not exported: {sorted(metrics - set(exported))}"
    labels = set().union(*(exported[m] for m in metrics))
    used = {label.strip() for group in GROUPING.findall(expr) for label in group.split(",") if label.strip()}
    used |= {m.split("=")[0].rstrip("!~").strip() for group in MATCHERS.findall(expr) for m in group.split(",") if m}
    used |= set(re.findall(r"label_values\(\s*[a-z_]+\s*,\s*([a-z_]+)\s*\)", expr))
    assert used <= labels, f"{where}: labels the metric lacks: {sorted(used - labels)}"


def test_every_exported_metric_has_a_panel(exported) -> None:
    shown = {m for _where, expr in queries(DOCUMENT) for m in METRIC.findall(expr)}
    assert {family(name) for name in exported} - {family(name) for name in shown} == set()


def test_the_dashboard_is_importable() -> None:
    assert DOCUMENT["uid"] == "stickyroute"
    assert [i["name"] for i in DOCUMENT["__inputs"]] == ["DS_PROMETHEUS"]
    ids = [panel["id"] for panel in DOCUMENT["panels"]]
    assert len(ids) == len(set(ids))
    for panel in DOCUMENT["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
