"""The Dockerfile's shape, read without building it (scripts/test-image builds and checks the
images for real): one stage from scratch over a root assembled outside, nothing run inside
(no shell to run it with), the version label from the build's VERSION, a numeric non-root
user, the venv's `brupop` as entrypoint."""

from __future__ import annotations

import json
import re

from tests.deploy.rendering import REPO


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


def _all(name: str) -> list[str]:
    return [args for instruction, args in _instructions() if instruction == name]


def test_the_image_is_one_stage_from_scratch_that_copies_its_root_and_runs_nothing() -> None:
    assert _all("FROM") == ["scratch"]
    assert _all("COPY") == ["${ROOT}/ /"]
    assert _all("RUN") == []


def test_the_version_label_comes_from_the_builds_version() -> None:
    (label,) = _all("LABEL")
    assert 'org.opencontainers.image.version="${VERSION}"' in label
    assert "VERSION" in _all("ARG")


def test_the_image_runs_brupop_as_a_numeric_non_root_user() -> None:
    (user,) = _all("USER")
    assert user == "10001:10001"  # numeric, so runAsNonRoot can check it
    (entrypoint,) = _all("ENTRYPOINT")
    assert json.loads(entrypoint) == ["/opt/brupop/bin/brupop"]
