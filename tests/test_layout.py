"""The house's shape (issue #8 "Done when"): small modules, no import cycles, a dispatcher that knows
no platform, no httpx on the forwarding path, a face (`__all__`) on every package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PROXY = Path(__file__).resolve().parents[1] / "stickyroute"
MAX_LINES = 300


def _modules() -> dict[str, Path]:
    out = {}
    for path in PROXY.rglob("*.py"):
        name = ".".join(path.relative_to(PROXY.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _imports(path: Path, known: set[str]) -> set[str]:
    """Modules of `known` that `path` imports anywhere: at module level, inside functions (lazy
    imports still tie the modules together) and under `if TYPE_CHECKING:` (a type is a dependency)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found & known


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


MODULES = _modules()
GRAPH = {name: _imports(path, set(MODULES)) - {name} for name, path in MODULES.items()}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_over_300_lines(name: str) -> None:
    assert len(MODULES[name].read_text().splitlines()) <= MAX_LINES


def test_no_module_import_cycle() -> None:
    assert _cycle(GRAPH) is None


def test_no_package_import_cycle() -> None:
    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages: dict[str, set[str]] = {}
    for module, deps in GRAPH.items():
        packages.setdefault(package(module), set()).update(package(d) for d in deps if package(d) != package(module))
    assert _cycle(packages) is None


def test_the_dispatcher_knows_no_platform() -> None:
    source = (PROXY / "forwarding" / "dispatch.py").read_text()
    platform_words = ["ChannelType.", "telegram", "whatsapp", "update_id", "wamid", "hub", "secret_token",
                      "app_secret", "verify_token"]
    assert [word for word in platform_words if word in source.lower()] == []


@pytest.mark.parametrize("folder", ["forwarding", "channels", "state", "routing"])
def test_no_httpx_on_the_forwarding_path(folder: str) -> None:
    importers = [name for name, path in MODULES.items()
                 if name.startswith(f"stickyroute.{folder}") and "httpx" in _imports(path, {"httpx"})]
    assert importers == []


@pytest.mark.parametrize("package", sorted(name for name, path in MODULES.items() if path.name == "__init__.py"))
def test_every_package_face_has_all(package: str) -> None:
    tree = ast.parse(MODULES[package].read_text())
    names = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)]
    assert "__all__" in names


def test_imports_inside_functions_and_under_type_checking_are_read(tmp_path):
    source = tmp_path / "sample.py"
    source.write_text("from typing import TYPE_CHECKING\nimport a.top\nif TYPE_CHECKING:\n    from b.typed import T\n\n"
                      "def f():\n    from c.lazy import g\n    import d\n    return g, d\n")
    assert _imports(source, {"a.top", "b.typed", "c.lazy", "d", "e"}) == {"a.top", "b.typed", "c.lazy", "d"}


def _reachable(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in GRAPH.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("stickyroute.server")))
def test_the_running_server_never_imports_the_offline_replay_package(name: str) -> None:
    assert sorted(m for m in _reachable(name) if m.startswith("stickyroute.replay")) == []


PURE_ENGINE = ["stickyroute.routing.engine", "stickyroute.routing.explain", "stickyroute.routing.decision", "stickyroute.routing.signals",
               "stickyroute.routing.layer1", "stickyroute.routing.keywords", "stickyroute.routing.explicit",
               "stickyroute.routing.rules", "stickyroute.core.route", "stickyroute.core.delivery"]


@pytest.mark.parametrize("name", PURE_ENGINE)
def test_the_pure_engine_imports_nothing_from_the_storage_package(name: str) -> None:
    assert sorted(d for d in GRAPH[name] if d.startswith("stickyroute.state")) == []
