"""The chart's observability kit: a PrometheusRule and a Grafana dashboard ConfigMap, each off by
default and switched on by a value, rendered from the same files promtool checks; with the kit
on, every document still validates (the PrometheusRule against its own schema)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest

from tests.deploy.cert_manager_schema import CERT_MANAGER_SCHEMAS
from tests.deploy.kube_validation import (
    cert_manager_problems,
    kubernetes_problems,
    kubernetes_versions,
)
from tests.deploy.observability_kit import (
    DASHBOARD_CONFIGMAP,
    KIT_ON,
    RULE_NAME,
    alert_rules,
    dashboard,
    dashboard_queries,
    rule_groups,
)
from tests.deploy.prometheus_rule_schema import PROMETHEUS_RULE_SCHEMA
from tests.deploy.rendering import Helm, Rendered

RULE_KIND = ("monitoring.coreos.com/v1", "PrometheusRule")
MONITOR_KIND = ("monitoring.coreos.com/v1", "ServiceMonitor")
EXPECTED_ALERTS = {
    "BrupopFleetHalted",
    "BrupopNodeStuckPastTimeout",
    "BrupopDrainBlocked",
    "BrupopAgentNotReporting",
    "BrupopNoProgress",
}


@pytest.fixture(scope="module")
def kit_render(helm: Helm) -> Rendered:
    """The chart with the ServiceMonitor, the PrometheusRule and the dashboard switched on."""
    return Rendered(helm.template(KIT_ON))


def _rule_problems(doc: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft202012Validator(PROMETHEUS_RULE_SCHEMA)
    return [
        f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(doc)
    ]


def test_the_kit_is_off_by_default(manifest: Rendered) -> None:
    assert manifest.of_kind("PrometheusRule") == []
    assert manifest.find("ConfigMap", DASHBOARD_CONFIGMAP) is None


def test_the_rule_file_has_the_five_alerts_each_with_a_severity_and_a_summary() -> None:
    rules = alert_rules()
    assert {rule["alert"] for rule in rules} == EXPECTED_ALERTS
    for rule in rules:
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_the_prometheus_rule_holds_the_rule_files_groups(kit_render: Rendered) -> None:
    rule = kit_render.get("PrometheusRule", RULE_NAME)
    assert rule["spec"]["groups"] == rule_groups()
    assert rule["metadata"]["namespace"] == "brupop-bottlerocket-aws"


def test_the_prometheus_rule_fits_its_schema(kit_render: Rendered) -> None:
    assert _rule_problems(kit_render.get("PrometheusRule", RULE_NAME)) == []


@pytest.mark.parametrize(
    ("mistake", "path", "value"),
    [
        ("a misspelt field", ("spec", "groups", 0, "rules", 0, "expresion"), "up"),
        ("a bad duration", ("spec", "groups", 0, "rules", 0, "for"), "10 minutes"),
        ("a rule both alert and record", ("spec", "groups", 0, "rules", 0, "record"), "x"),
        ("a group without a name", ("spec", "groups", 0, "name"), ...),
    ],
)
def test_the_prometheus_rule_schema_catches_mistakes(
    kit_render: Rendered, mistake: str, path: tuple[Any, ...], value: object
) -> None:
    rule = copy.deepcopy(kit_render.get("PrometheusRule", RULE_NAME))
    *parents, last = path
    target: Any = rule
    for key in parents:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    assert _rule_problems(rule) != [], mistake


def test_the_rule_labels_value_reaches_the_prometheus_rule(helm: Helm) -> None:
    values = copy.deepcopy(KIT_ON)
    values["prometheus"]["rules"]["labels"] = {"release": "kube-prometheus-stack"}
    rule = Rendered(helm.template(values)).get("PrometheusRule", RULE_NAME)
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert rule["metadata"]["labels"]["app.kubernetes.io/part-of"] == "brupop"


def test_the_dashboard_configmap_is_labelled_for_the_grafana_sidecar(
    kit_render: Rendered,
) -> None:
    configmap = kit_render.get("ConfigMap", DASHBOARD_CONFIGMAP)
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["namespace"] == "brupop-bottlerocket-aws"
    assert "annotations" not in configmap["metadata"]
    assert json.loads(configmap["data"]["brupop.json"]) == dashboard()


def test_the_dashboard_label_namespace_and_annotations_are_configurable(helm: Helm) -> None:
    values = copy.deepcopy(KIT_ON)
    values["grafana"]["dashboard"].update(
        label="team_dashboards",
        labelValue="brupop",
        namespace="monitoring",
        annotations={"grafana_folder": "Bottlerocket"},
    )
    configmap = Rendered(helm.template(values)).get("ConfigMap", DASHBOARD_CONFIGMAP)
    metadata = configmap["metadata"]
    assert metadata["labels"]["team_dashboards"] == "brupop"
    assert "grafana_dashboard" not in metadata["labels"]
    assert metadata["namespace"] == "monitoring"
    assert metadata["annotations"] == {"grafana_folder": "Bottlerocket"}


def test_the_dashboard_shows_states_versions_phases_failures_and_the_budget() -> None:
    queries = " ".join(query.expr for query in dashboard_queries())
    for metric in (
        "brupop_hosts_state",
        "brupop_hosts_version",
        "brupop_update_phase_duration_seconds_bucket",
        "brupop_update_failures_total",
        "brupop_max_concurrent_update",
    ):
        assert metric in queries
    uses_datasource_variable = [
        panel["datasource"]["uid"] == "${datasource}"
        for panel in dashboard()["panels"]
        if panel["type"] != "row"
    ]
    assert uses_datasource_variable and all(uses_datasource_variable)


def test_the_service_monitor_still_renders_with_the_kit(kit_render: Rendered) -> None:
    monitor = kit_render.get("ServiceMonitor", "brupop-controller")
    assert monitor["spec"]["endpoints"] == [{"port": "main", "path": "/metrics"}]


@pytest.mark.parametrize("version", [kubernetes_versions()[0], kubernetes_versions()[-1]])
def test_the_render_with_the_kit_on_validates(version: str, kit_render: Rendered) -> None:
    """Kubernetes kinds strictly, cert-manager kinds and the PrometheusRule by their schemas;
    the ServiceMonitor (no schema) by its own test above."""
    unchecked = set()
    problems: list[str] = []
    for doc in kit_render:
        found = kubernetes_problems(doc, version)
        if found is None:
            unchecked.add((doc["apiVersion"], doc["kind"]))
        else:
            problems += found
    assert problems == []
    assert unchecked == set(CERT_MANAGER_SCHEMAS) | {RULE_KIND, MONITOR_KIND}
    assert [cert_manager_problems(doc) or [] for doc in kit_render] == [[]] * len(kit_render.docs)
    (rule,) = kit_render.of_kind("PrometheusRule")
    assert _rule_problems(rule) == []
