"""The packaged chart (scripts/package-chart): a Helm repository whose index names the package
by brupop's version and digest; rendered from the package, its images carry the version; its
values schema refuses a value of a wrong type with a message naming the value."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.rendering import REPO, Helm, Rendered, load_yaml
from tests.deploy.test_release_version import package_version

PACKAGE_CHART = REPO / "scripts" / "package-chart"


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory scripts/package-chart filled: the .tgz and index.yaml."""
    out = tmp_path_factory.mktemp("chart")
    subprocess.run(
        [str(PACKAGE_CHART)],
        env={**os.environ, "OUT": str(out), "REPO_URL": "https://charts.example/brupop"},
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def _render(helm: Helm, chart: Path, *values: str) -> subprocess.CompletedProcess[str]:
    flags = [arg for value in values for arg in ("--set-json", value)]
    return subprocess.run(
        [str(helm.binary), "template", "brupop", str(chart), *flags],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _package(packaged: Path) -> Path:
    return packaged / f"bottlerocket-update-operator-{package_version()}.tgz"


def test_the_index_names_the_package_by_version_url_and_digest(packaged: Path) -> None:
    index: dict[str, Any] = load_yaml((packaged / "index.yaml").read_text())
    (entry,) = index["entries"]["bottlerocket-update-operator"]
    package = _package(packaged)
    assert entry["version"] == entry["appVersion"] == package_version()
    assert entry["urls"] == [f"https://charts.example/brupop/{package.name}"]
    assert entry["digest"] == hashlib.sha256(package.read_bytes()).hexdigest()


def test_the_packaged_chart_renders_images_tagged_with_the_version(
    helm: Helm, packaged: Path
) -> None:
    result = _render(helm, _package(packaged))
    assert result.returncode == 0, result.stderr
    images = {c["image"] for doc in Rendered(result.stdout) for c in _containers(doc)}
    version = package_version()
    assert images == {f"brupop-agent:{version}", f"brupop-control:{version}"}


def test_the_packaged_chart_still_takes_one_image_as_a_string(helm: Helm, packaged: Path) -> None:
    result = _render(helm, _package(packaged), 'image="registry.example/brupop:1.2.3"')
    assert result.returncode == 0, result.stderr
    images = {c["image"] for doc in Rendered(result.stdout) for c in _containers(doc)}
    assert images == {"registry.example/brupop:1.2.3"}


@pytest.mark.parametrize(
    ("value", "path", "complaint"),
    [
        ('create_namespace="yes"', "/create_namespace", "got string, want boolean"),
        ("image=5", "/image", "got number, want string"),
        ('image={"agent_repository": "a", "control_repository": "c", "tag": 1}', "/image", "oneOf"),
        ('logging={"formatter": "xml"}', "/logging/formatter", "value must be one of"),
        ("max_concurrent_updates=true", "/max_concurrent_updates", "want integer or string"),
        ('network_policy={"enabled": "no"}', "/network_policy/enabled", "want boolean"),
        ("image_pull_secrets=[{}]", "/image_pull_secrets/0", "missing property 'name'"),
        (
            'state_timeouts={"idle_seconds": "two minutes"}',
            "/state_timeouts/idle_seconds",
            "pattern",
        ),
    ],
)
def test_the_schema_refuses_a_value_of_a_wrong_type_naming_it(
    helm: Helm, packaged: Path, value: str, path: str, complaint: str
) -> None:
    result = _render(helm, _package(packaged), value)
    assert result.returncode != 0
    assert "values don't meet the specifications of the schema" in result.stderr
    assert f"at '{path}'" in result.stderr and complaint in result.stderr, result.stderr


def test_the_schema_takes_every_default_value() -> None:
    schema = json.loads((REPO / "deploy/charts/bottlerocket-update-operator/values.schema.json")
                        .read_text())  # fmt: skip
    values = load_yaml(
        (REPO / "deploy/charts/bottlerocket-update-operator/values.yaml").read_text()
    )
    assert set(values) <= set(schema["properties"])  # every value has its type


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc.get("spec", {}).get("template", {}).get("spec", {})
    containers: list[dict[str, Any]] = spec.get("containers", [])
    return containers
