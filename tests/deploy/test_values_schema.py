"""The chart refuses what the processes refuse: its values schema is generated from the
processes' settings, Helm refuses every bad setting naming the value, every default and every
bound of a number passes both Helm and the processes, and `helm install` prints what to do next."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from brupop.cli.chart_values.process_values import number_bounds
from brupop.cli.chart_values.values_schema import values_schema
from brupop.entrypoints.agent.settings import load_settings as load_agent
from brupop.entrypoints.apiserver.settings import load_settings as load_apiserver
from brupop.entrypoints.controller.notification_settings import load_notification_settings
from brupop.entrypoints.controller.settings import load_settings as load_controller
from brupop.entrypoints.settings_error import SettingsError
from tests.deploy.rendering import CHART, REPO, Helm, Rendered
from tests.deploy.values_refusals import REFUSALS, Refusal

SCHEMA = CHART / "values.schema.json"
BASE = REPO / "deploy" / "values.schema.base.json"
SCHEMA_REFUSAL = "values don't meet the specifications of the schema"
NO_NAMESPACE_FILE = Path("/nonexistent/namespace")
WORKLOADS = {
    "agent": ("DaemonSet", "brupop-agent"),
    "apiserver": ("Deployment", "brupop-apiserver"),
    "controller": ("Deployment", "brupop-controller-deployment"),
}


def _helm(helm: Helm, chart: Path, values: Mapping[str, Any], tmp: Path, *args: str) -> Any:
    overrides = tmp / "values.yaml"
    overrides.write_text(yaml.safe_dump(dict(values)), encoding="utf-8")
    return subprocess.run(
        [str(helm.binary), *args, "brupop", str(chart), "-f", str(overrides)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def chart_without_schema(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the chart with no values schema: what the processes get without one."""
    copy = tmp_path_factory.mktemp("chart") / CHART.name
    shutil.copytree(CHART, copy)
    (copy / "values.schema.json").unlink()
    return copy


def _refusals_at_start(rendered: Rendered, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The variables the three processes refuse at start with the rendered environments."""
    env = {name: _env(rendered, name) for name in WORKLOADS}
    for variable, value in env["controller"].items():
        monkeypatch.setenv(variable, value)
    starts: dict[str, Callable[[], object]] = {
        "agent": lambda: load_agent(env["agent"], namespace_file=NO_NAMESPACE_FILE),
        "controller": load_controller,
        "notifications": lambda: load_notification_settings(env["controller"]),
    }
    refused = set()
    for start in starts.values():
        try:
            start()
        except SettingsError as error:
            refused.add(error.variable)
    for variable in env["controller"]:
        monkeypatch.delenv(variable)
    for variable, value in env["apiserver"].items():
        monkeypatch.setenv(variable, value)
    try:
        load_apiserver()
    except SettingsError as error:
        refused.add(error.variable)
    return refused


def _env(rendered: Rendered, name: str) -> dict[str, str]:
    env = rendered.env(*WORKLOADS[name])
    return {**env, "MY_NODE_NAME": "node-a"}


def test_the_committed_schema_is_generated_from_the_settings() -> None:
    generated = values_schema(json.loads(BASE.read_text(encoding="utf-8")))
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == generated, "run deploy/render"


@pytest.mark.parametrize("refusal", REFUSALS.values(), ids=REFUSALS.keys())
def test_helm_refuses_a_bad_setting_naming_the_value(
    helm: Helm, refusal: Refusal, tmp_path: Path
) -> None:
    result = _helm(helm, CHART, refusal.values, tmp_path, "template")
    assert result.returncode != 0 and SCHEMA_REFUSAL in result.stderr, result.stderr
    assert f"at '{refusal.path}'" in result.stderr, result.stderr
    assert refusal.named in result.stderr, result.stderr


@pytest.mark.parametrize(
    "refusal",
    [r for r in REFUSALS.values() if r.variable],
    ids=[k for k, r in REFUSALS.items() if r.variable],
)
def test_each_refused_setting_is_one_a_process_refuses_at_start(
    helm: Helm,
    chart_without_schema: Path,
    refusal: Refusal,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = _helm(helm, chart_without_schema, refusal.values, tmp_path, "template")
    assert result.returncode == 0, result.stderr
    assert refusal.variable in _refusals_at_start(Rendered(result.stdout), monkeypatch)


def test_the_defaults_pass_helm_and_every_process(
    default_render: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _refusals_at_start(Rendered(default_render), monkeypatch) == set()


def _bound_cases() -> list[tuple[dict[str, Any], str]]:
    cases = []
    for path, (bounds, _variable) in number_bounds().items():
        for number in (bounds.least, bounds.most):
            values: dict[str, Any] = {path[-1]: str(number)}
            for key in reversed(path[:-1]):
                values = {key: values}
            cases.append((values, f"{'.'.join(path)}={number}"))
    return cases


BOUNDS = _bound_cases()


@pytest.mark.parametrize("values", [c[0] for c in BOUNDS], ids=[c[1] for c in BOUNDS])
def test_every_bound_of_a_number_passes_helm_and_every_process(
    helm: Helm, values: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema's bounds are the processes' own: the least and the most are taken by both."""
    if "apiserver_webhook_port" in values or "apiserver_internal_port" in values:
        values = {"apiserver_internal_port": "8443", "apiserver_webhook_port": "8444", **values}
        if values["apiserver_internal_port"] == values["apiserver_webhook_port"]:
            values["apiserver_webhook_port"] = "8445"
    result = _helm(helm, CHART, values, tmp_path, "template")
    assert result.returncode == 0, result.stderr
    assert _refusals_at_start(Rendered(result.stdout), monkeypatch) == set()


def test_helm_refuses_one_port_for_both_apiserver_listeners(helm: Helm, tmp_path: Path) -> None:
    values = {"apiserver_internal_port": "8444", "apiserver_webhook_port": 8444}
    result = _helm(helm, CHART, values, tmp_path, "template")
    assert result.returncode != 0
    assert "apiserver_webhook_port must differ from apiserver_internal_port" in result.stderr


def test_helm_install_says_how_to_opt_nodes_in_and_check_the_install(
    helm: Helm, tmp_path: Path
) -> None:
    result = _helm(helm, CHART, {}, tmp_path, "install", "--dry-run")
    assert result.returncode == 0, result.stderr
    notes = result.stdout.partition("\nNOTES:\n")[2]
    assert "kubectl label node NODE_NAME bottlerocket.aws/updater-interface-version=2.0.0" in notes
    assert "brupop doctor --namespace brupop-bottlerocket-aws" in notes
    assert "docs/install.md" in notes
