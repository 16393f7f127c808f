"""One version: pyproject.toml's is the only source. `brupop --version`, the chart's version
and appVersion, the image tags the chart renders, the version the image build labels and tags
with, and CHANGELOG.md's newest release all say it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from brupop.cli.main import main
from tests.deploy.rendering import CHART, REPO, Rendered, load_yaml


def package_version() -> str:
    """pyproject.toml's version."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version: str = project["version"]
    return version


def test_brupop_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"brupop {package_version()}\n"


def test_the_charts_version_and_app_version_are_the_package_version() -> None:
    chart = load_yaml((CHART / "Chart.yaml").read_text(encoding="utf-8"))
    assert chart["version"] == chart["appVersion"] == package_version()


def test_the_committed_manifest_runs_images_tagged_with_the_package_version(
    manifest: Rendered,
) -> None:
    tags = {
        container["image"].rpartition(":")[2]
        for doc in manifest.of_kind("DaemonSet") + manifest.of_kind("Deployment")
        for container in doc["spec"]["template"]["spec"]["containers"]
    }
    assert tags == {package_version()}


def test_the_image_build_takes_its_version_from_the_package() -> None:
    # scripts/build-images tags localhost/brupop-<image>:<this>-<arch> and labels with it.
    answer = subprocess.run(
        [sys.executable, "-m", "scripts.release", "version"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert answer.stdout == f"{package_version()}\n"
    build = (REPO / "scripts" / "build-images").read_text(encoding="utf-8")
    assert 'version=$("$PYTHON" -m scripts.release version)' in build
    assert '--build-arg "VERSION=$version"' in build
    assert 'tag="localhost/brupop-$image:$version-$arch"' in build


def test_the_changelogs_newest_release_is_the_package_version() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, re.M)
    assert releases[0] == package_version()
    assert "## Changes since the original" in changelog
