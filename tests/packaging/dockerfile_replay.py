"""Replay a Dockerfile's install steps without a Docker engine: each stage gets a folder standing
for its filesystem root and a fresh virtualenv standing for the image's Python; COPY copies from
the build context (or an earlier stage's folder), RUN runs its `pip` and `rm` commands with the
container's absolute paths mapped into the stage's folder. Account creation (`groupadd`,
`useradd`) is recorded, not run (it needs root on the host): the test checks the USER against it.

    image = replay(Path("Dockerfile"), context=ROOT, work=tmp)
    image.command("stickyroute")      the final stage's virtualenv script
    image.path("/etc/stickyroute")    a container path in the final stage's folder
    image.cmd, image.healthcheck, image.user, image.accounts, image.expose, image.copies, image.bases

The Dockerfile is read with `dockerfile-parse`; an instruction or RUN command this replay cannot
play fails loudly, so the Dockerfile cannot grow a step the test silently skips.
"""

from __future__ import annotations

import glob
import json
import shlex
import shutil
import subprocess
import venv
from dataclasses import dataclass, field
from pathlib import Path

from dockerfile_parse import DockerfileParser

INSTALL_GUARD_S = 900.0
"""Hang guard of one pip run (a fresh virtualenv installs every dependency)."""


@dataclass
class Stage:
    name: str
    base: str
    root: Path
    python: Path
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)

    def path(self, container_path: str) -> Path:
        """A container path (absolute, or relative to WORKDIR) in this stage's folder."""
        absolute = container_path if container_path.startswith("/") else f"{self.workdir.rstrip('/')}/{container_path}"
        return self.root / absolute.lstrip("/")


@dataclass
class Image:
    """The final stage, and what the Dockerfile said about running it."""

    stage: Stage
    stages: dict[str, Stage]
    bases: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)
    user: str = ""
    accounts: list[list[str]] = field(default_factory=list)
    expose: list[str] = field(default_factory=list)
    copies: list[tuple[str | None, str]] = field(default_factory=list)
    """(stage or None for the build context, source) of every COPY."""

    def command(self, name: str) -> Path:
        return self.stage.python.parent / name

    def path(self, container_path: str) -> Path:
        return self.stage.path(container_path)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _map(stage: Stage, word: str) -> list[str]:
    """An argument with a container path mapped (and a glob expanded)."""
    if not word.startswith("/"):
        return [word]
    mapped = str(stage.path(word))
    return sorted(glob.glob(mapped)) or [mapped] if "*" in mapped else [mapped]


def _run(stage: Stage, image: Image, command: str) -> None:
    for part in command.split("&&"):
        words = shlex.split(part)
        if not words:
            continue
        if words[0] in ("groupadd", "useradd"):
            image.accounts.append(words)
            continue
        args = [mapped for word in words[1:] for mapped in _map(stage, word)]
        if words[0] == "pip":
            cwd = stage.path(stage.workdir)
            cwd.mkdir(parents=True, exist_ok=True)
            subprocess.run([str(stage.python), "-m", "pip", *args], cwd=cwd, check=True, timeout=INSTALL_GUARD_S,
                           stdout=subprocess.DEVNULL)
        elif words[0] == "rm" and words[1] in ("-rf", "-fr"):
            for target in args[1:]:
                shutil.rmtree(target, ignore_errors=True)
        else:
            raise AssertionError(f"the replay cannot play RUN {words[0]!r}: teach tests/packaging/dockerfile_replay.py")


def replay(dockerfile: Path, context: Path, work: Path) -> Image:
    """Play `dockerfile` with `context` as the build context, stages under `work` (see the module docstring)."""
    stages: dict[str, Stage] = {}
    image: Image | None = None
    stage: Stage | None = None
    for instruction in DockerfileParser(str(dockerfile)).structure:
        kind, value = instruction["instruction"], instruction["value"]
        if kind == "COMMENT":
            continue
        if kind == "FROM":
            words = value.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else f"stage{len(stages)}"
            root = work / name
            venv.EnvBuilder(with_pip=True).create(root / "venv")
            stage = stages[name] = Stage(name, words[0], root, root / "venv" / "bin" / "python")
            image = Image(stage, stages, bases=[*(image.bases if image else []), words[0]],
                          copies=image.copies if image else [], accounts=image.accounts if image else [])
            continue
        assert stage is not None and image is not None, f"{kind} before FROM"
        if kind == "WORKDIR":
            stage.workdir = value if value.startswith("/") else f"{stage.workdir.rstrip('/')}/{value}"
            stage.path(stage.workdir).mkdir(parents=True, exist_ok=True)
        elif kind == "ENV":
            stage.env.update(pair.split("=", 1) for pair in shlex.split(value))
        elif kind == "COPY":
            words = shlex.split(value)
            origin = words.pop(0).removeprefix("--from=") if words[0].startswith("--from=") else None
            *sources, target = words
            for source in sources:
                image.copies.append((origin, source))
                found = stages[origin].path(source) if origin else context / source
                assert found.exists(), f"COPY {source}: {found} does not exist"
                into = stage.path(target)
                _copy(found, into / found.name if target.endswith("/") or len(sources) > 1 else into)
        elif kind == "RUN":
            _run(stage, image, value)
        elif kind == "USER":
            image.user = value
        elif kind == "EXPOSE":
            image.expose = value.split()
        elif kind == "HEALTHCHECK":
            image.healthcheck = json.loads(value[value.index("CMD") + 3:].strip())
        elif kind == "CMD":
            image.cmd = json.loads(value)
        else:
            raise AssertionError(f"the replay cannot play {kind}: teach tests/packaging/dockerfile_replay.py")
    assert image is not None, "no FROM"
    return image
