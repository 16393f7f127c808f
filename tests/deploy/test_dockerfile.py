"""The Dockerfile's shape, read without building it (scripts/test-image builds it for real):
multi-stage, slim Python, the venv installed without extras and copied from the builder, no build
tools in the final stage, a non-root user, `brupop` as entrypoint. The .dockerignore sends only
what the build needs."""

from __future__ import annotations

import json
import re

from tests.deploy.rendering import REPO

BUILD_TOOLS = re.compile(r"\b(pip|apt-get|apt|gcc|cc|make|build-essential|uv|poetry)\b")


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    text = re.sub(r"\\\n", " ", text)
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            instruction, _, arguments = line.partition(" ")
            found.append((instruction.upper(), arguments.strip()))
    return found


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _instructions():
        if instruction[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _base_image() -> str:
    (default,) = [
        args for name, args in _instructions() if name == "ARG" and "PYTHON_IMAGE" in args
    ]
    return default.split("=", 1)[1]


def test_both_stages_are_the_slim_python_311_image() -> None:
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", _base_image())
    stages = _stages()
    assert len(stages) == 2
    assert [stage[0][1].split()[0] for stage in stages] == ["${PYTHON_IMAGE}"] * 2


def test_the_final_stage_copies_the_builders_venv_and_builds_nothing() -> None:
    builder, final = _stages()
    builder_name = builder[0][1].split()[-1]
    copies = [args for name, args in final if name == "COPY"]
    assert copies == [f"--from={builder_name} /opt/brupop /opt/brupop"]
    runs = " ".join(args for name, args in final if name == "RUN")
    assert not BUILD_TOOLS.search(runs)


def test_the_builder_installs_wheels_only_and_removes_pip() -> None:
    builder, _ = _stages()
    runs = " ".join(args for name, args in builder if name == "RUN")
    assert "--only-binary=:all:" in runs
    assert "uninstall --yes pip setuptools" in runs


def test_the_builder_installs_brupop_without_extras() -> None:
    # The extras (simulate's rich and cryptography) stay out of the image the cluster runs.
    builder, _ = _stages()
    runs = " ".join(args for name, args in builder if name == "RUN")
    (target,) = re.findall(r"/opt/brupop/bin/pip install (?:--\S+ )*(\S+)", runs)
    assert target == "."


def test_the_image_runs_brupop_as_a_numeric_non_root_user() -> None:
    _, final = _stages()
    (user,) = [args for name, args in final if name == "USER"]
    uid = user.split(":")[0]
    assert uid.isdigit() and int(uid) != 0  # numeric, so runAsNonRoot can check it
    (entrypoint,) = [args for name, args in final if name == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["brupop"]


def test_the_build_context_is_only_the_package_sources() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").split("\n")
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules[0] == "*"
    assert {rule for rule in rules if rule.startswith("!")} == {
        "!pyproject.toml",
        "!README.md",
        "!src/",
    }
