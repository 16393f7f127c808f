"""The chart: it renders to the committed manifest, and every value reaches what it configures."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from brupop.cli.crd.definition import CRD_NAME as SHADOW_CRD
from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.crd.policy_definition import CRD_NAME as POLICY_CRD
from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.domain.cluster.objects import NODE_EVENT_NAMESPACE
from tests.deploy.kube_validation import (
    cert_manager_problems,
    kubernetes_problems,
    kubernetes_versions,
)
from tests.deploy.observability_kit import OBSERVABILITY_VALUES
from tests.deploy.rendering import (
    CHART,
    Helm,
    Rendered,
    load_yaml,
    manifest_text,
    without_comment_header,
)
from tests.deploy.test_notification_chart import NOTIFICATION_VALUES


def test_the_one_file_manifest_is_the_chart_rendered_with_default_values(
    default_render: str,
) -> None:
    assert without_comment_header(manifest_text()) == default_render, "run deploy/render"


def test_helm_lint_finds_nothing(helm: Helm) -> None:
    result = helm.lint()
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("namespace", "port"), [("brupop-bottlerocket-aws", 8444), ("update-ops", 9443)]
)
def test_the_charts_crds_are_what_brupop_crd_generates_for_that_namespace_and_port(
    helm: Helm, namespace: str, port: int
) -> None:
    rendered = Rendered(
        helm.template({"namespace": namespace, "apiserver_webhook_port": str(port)})
    )
    crd = rendered.get("CustomResourceDefinition", SHADOW_CRD)
    assert crd == custom_resource_definition(namespace, port)
    assert rendered.get("CustomResourceDefinition", POLICY_CRD) == (
        policy_custom_resource_definition()
    )
    assert len(rendered.of_kind("CustomResourceDefinition")) == 2


def test_the_namespace_is_left_out_when_it_is_not_to_be_created(helm: Helm) -> None:
    rendered = Rendered(helm.template({"create_namespace": False}))
    assert rendered.of_kind("Namespace") == []
    assert len(rendered.docs) == len(Rendered(helm.template()).docs) - 1


def test_the_service_monitor_is_rendered_only_when_enabled(helm: Helm, manifest: Rendered) -> None:
    assert manifest.of_kind("ServiceMonitor") == []
    values = {"prometheus": {"controller": {"serviceMonitor": {"enabled": True}}}}
    monitor = Rendered(helm.template(values)).get("ServiceMonitor", "brupop-controller")
    service = manifest.get("Service", "brupop-controller-server")
    selector = monitor["spec"]["selector"]["matchLabels"]
    assert selector.items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"] == [{"port": "main", "path": "/metrics"}]
    assert "main" in [port["name"] for port in service["spec"]["ports"]]


# --- Every value is used: each one, changed, shows up where it belongs. -----------------------

Check = Callable[[Rendered], bool]
AGENT = ("DaemonSet", "brupop-agent")
APISERVER = ("Deployment", "brupop-apiserver")
CONTROLLER = ("Deployment", "brupop-controller-deployment")
TOLERATION = [{"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}]
AFFINITY_TERM = {
    "labelSelector": {"matchLabels": {"team": "ops"}},
    "topologyKey": "topology.kubernetes.io/zone",
}
SPREAD = [
    {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"brupop.bottlerocket.aws/component": "apiserver"}},
    }
]
MONITORING_ONLY = {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}
CONTROL_PLANE = {"ipBlock": {"cidr": "172.16.0.0/16"}}
RESOURCES = {"limits": {"memory": "300Mi"}, "requests": {"cpu": "20m", "memory": "64Mi"}}


@dataclass(frozen=True)
class Change:
    """A value (dotted path), a new value for it, and where that value must then be found."""

    path: str
    value: Any
    check: Check


def _env(workload: tuple[str, str], name: str, value: str) -> Check:
    return lambda rendered: rendered.env(*workload).get(name) == value


def _pod(workload: tuple[str, str], field: str, value: Any) -> Check:
    return lambda rendered: _includes(rendered.pod_spec(*workload).get(field), value)


def _affinity(workload: tuple[str, str], kind: str, value: Any) -> Check:
    return lambda rendered: _includes(rendered.pod_spec(*workload)["affinity"].get(kind), value)


def _resources(workload: tuple[str, str]) -> Check:
    return lambda rendered: _includes(rendered.container(*workload)["resources"], RESOURCES)


def _all_namespaced_in(namespace: str) -> Check:
    """Every namespaced object moves with the value, except the grant to record Events about
    Nodes, which the Kubernetes API keeps in `default`."""

    def check(rendered: Rendered) -> bool:
        namespaces = {doc["metadata"].get("namespace") for doc in rendered} - {
            None,
            NODE_EVENT_NAMESPACE,
        }
        subjects = {subject["namespace"] for doc in rendered for subject in doc.get("subjects", [])}
        (created,) = rendered.of_kind("Namespace")
        return namespaces == subjects == {created["metadata"]["name"]} == {namespace}

    return check


def _includes(actual: Any, expected: Any) -> bool:
    """`expected` is part of `actual` (helm merges a map value into the default map)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _includes(actual[key], value) for key, value in expected.items()
        )
    return bool(actual == expected)


def _image(image: str) -> Check:
    return lambda rendered: all(
        rendered.container(*workload)["image"] == image
        for workload in (AGENT, APISERVER, CONTROLLER)
    )


def _pull_secrets(secrets: list[dict[str, str]]) -> Check:
    return lambda rendered: all(
        rendered.pod_spec(*workload).get("imagePullSecrets") == secrets
        for workload in (AGENT, APISERVER, CONTROLLER)
    )


def _pod_labels(labels: dict[str, str]) -> Check:
    return lambda rendered: all(
        labels.items() <= rendered.get(*workload)["spec"]["template"]["metadata"]["labels"].items()
        for workload in (AGENT, APISERVER, CONTROLLER)
    )


def _service_port(rendered: Rendered, name: str) -> Any:
    ports = rendered.get("Service", "brupop-apiserver")["spec"]["ports"]
    (port,) = [port for port in ports if port["name"] == name]
    return port


def _container_port(rendered: Rendered, name: str) -> Any:
    (port,) = [port for port in rendered.container(*APISERVER)["ports"] if port["name"] == name]
    return port["containerPort"]


def _policy_ports(rendered: Rendered) -> list[int]:
    policy = rendered.get("NetworkPolicy", "brupop-apiserver")
    return [port["port"] for rule in policy["spec"]["ingress"] for port in rule["ports"]]


def _ports(service_port: int, internal_port: int) -> Check:
    def check(rendered: Rendered) -> bool:
        port = _service_port(rendered, "https")
        return (
            (port["port"], port["targetPort"]) == (service_port, internal_port)
            and _container_port(rendered, "https") == internal_port
            and rendered.env(*APISERVER)["APISERVER_INTERNAL_PORT"] == str(internal_port)
            and internal_port in _policy_ports(rendered)
        )

    return check


def _webhook_ports(webhook_port: int) -> Check:
    def check(rendered: Rendered) -> bool:
        port = _service_port(rendered, "webhook")
        return (
            (port["port"], port["targetPort"]) == (webhook_port, "webhook")
            and _container_port(rendered, "webhook") == webhook_port
            and rendered.env(*APISERVER)["APISERVER_WEBHOOK_PORT"] == str(webhook_port)
            and webhook_port in _policy_ports(rendered)
            and _webhook_port(webhook_port)(rendered)
        )

    return check


def _webhook_port(port: int) -> Check:
    return lambda rendered: (
        rendered.get("CustomResourceDefinition", SHADOW_CRD)["spec"]["conversion"]["webhook"][
            "clientConfig"
        ]["service"]["port"]
        == port
    )


def _controller_source(peer: dict[str, Any]) -> Check:
    def check(rendered: Rendered) -> bool:
        (rule,) = rendered.get("NetworkPolicy", "brupop-controller")["spec"]["ingress"]
        return peer in rule["from"]

    return check


def _dns_name(name: str) -> Check:
    return lambda rendered: (
        name in rendered.get("Certificate", "brupop-apiserver-certificate")["spec"]["dnsNames"]
    )


PREFER_OPS = {
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": AFFINITY_TERM}
    ]
}
REQUIRE_OPS = {"requiredDuringSchedulingIgnoredDuringExecution": [AFFINITY_TERM]}


def _env_change(path: str, value: str, workload: tuple[str, str], name: str) -> Change:
    return Change(path, value, _env(workload, name, value))


def _pod_change(path: str, value: Any, workload: tuple[str, str], field: str) -> Change:
    return Change(path, value, _pod(workload, field, value))


def _affinity_change(path: str, value: Any, workload: tuple[str, str], kind: str) -> Change:
    return Change(path, value, _affinity(workload, kind, value))


def _service_port_everywhere(rendered: Rendered) -> bool:
    return _ports(1443, 9443)(rendered) and rendered.env(*AGENT)["APISERVER_SERVICE_PORT"] == "1443"


def _formatter_everywhere(rendered: Rendered) -> bool:
    workloads = (AGENT, APISERVER, CONTROLLER)
    return all(rendered.env(*w)["LOGGING_FORMATTER"] == "compact" for w in workloads)


def _drain_timeout_everywhere(rendered: Rendered) -> bool:
    workloads = (AGENT, APISERVER)
    return all(rendered.env(*w)["DRAIN_TIMEOUT_SECONDS"] == "1800" for w in workloads)


def _cluster_domain_everywhere(rendered: Rendered) -> bool:
    return rendered.env(*AGENT)["CLUSTER_DOMAIN"] == "cluster.example" and _dns_name(
        "brupop-apiserver.update-ops.svc.cluster.example"
    )(rendered)


CHANGES = [
    Change("namespace", "update-ops", _all_namespaced_in("update-ops")),
    Change("image", "registry.example/brupop:1.2.3", _image("registry.example/brupop:1.2.3")),
    Change("image_pull_secrets", [{"name": "regcred"}], _pull_secrets([{"name": "regcred"}])),
    _pod_change("placement.agent.tolerations", TOLERATION, AGENT, "tolerations"),
    _pod_change("placement.agent.priorityClassName", "node-critical", AGENT, "priorityClassName"),
    _pod_change("placement.controller.tolerations", TOLERATION, CONTROLLER, "tolerations"),
    _pod_change("placement.controller.nodeSelector", {"pool": "ops"}, CONTROLLER, "nodeSelector"),
    _affinity_change("placement.controller.podAffinity", PREFER_OPS, CONTROLLER, "podAffinity"),
    _affinity_change(
        "placement.controller.podAntiAffinity", REQUIRE_OPS, CONTROLLER, "podAntiAffinity"
    ),
    _pod_change(
        "placement.controller.priorityClassName", "critical", CONTROLLER, "priorityClassName"
    ),
    _pod_change(
        "placement.apiserver.topologySpreadConstraints",
        SPREAD,
        APISERVER,
        "topologySpreadConstraints",
    ),
    _pod_change("placement.apiserver.tolerations", TOLERATION, APISERVER, "tolerations"),
    _pod_change("placement.apiserver.nodeSelector", {"pool": "edge"}, APISERVER, "nodeSelector"),
    _affinity_change("placement.apiserver.podAffinity", REQUIRE_OPS, APISERVER, "podAffinity"),
    _affinity_change(
        "placement.apiserver.podAntiAffinity", REQUIRE_OPS, APISERVER, "podAntiAffinity"
    ),
    _pod_change(
        "placement.apiserver.priorityClassName", "critical", APISERVER, "priorityClassName"
    ),
    _env_change(
        "exclude_from_lb_wait_time_in_sec", "45", AGENT, "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC"
    ),
    _env_change("max_concurrent_updates", "unlimited", CONTROLLER, "MAX_CONCURRENT_UPDATE"),
    _env_change("release_age_quorum", "3", CONTROLLER, "RELEASE_AGE_QUORUM"),
    _env_change("variant_offer_grace_seconds", "3600", CONTROLLER, "VARIANT_OFFER_GRACE_SECONDS"),
    _env_change(
        "scheduler_cron_expression", "0 0 23 * * Sat *", CONTROLLER, "SCHEDULER_CRON_EXPRESSION"
    ),
    _env_change("update_window_start", "9:0:0", CONTROLLER, "UPDATE_WINDOW_START"),
    _env_change("update_window_stop", "17:0:0", CONTROLLER, "UPDATE_WINDOW_STOP"),
    Change("apiserver_internal_port", "9443", _ports(1443, 9443)),
    Change("apiserver_service_port", "1443", _service_port_everywhere),
    Change("apiserver_webhook_port", "9444", _webhook_ports(9444)),
    _env_change("apiserver_max_connections", "6000", APISERVER, "APISERVER_MAX_CONNECTIONS"),
    _env_change(
        "apiserver_webhook_max_connections", "900", APISERVER, "APISERVER_WEBHOOK_MAX_CONNECTIONS"
    ),
    _env_change(
        "apiserver_max_connections_per_address",
        "200",
        APISERVER,
        "APISERVER_MAX_CONNECTIONS_PER_ADDRESS",
    ),
    Change(
        "network_policy.metrics_namespace_selector",
        MONITORING_ONLY,
        _controller_source({"namespaceSelector": MONITORING_ONLY}),
    ),
    Change(
        "network_policy.controller_extra_sources",
        [CONTROL_PLANE],
        _controller_source(CONTROL_PLANE),
    ),
    Change("logging.formatter", "compact", _formatter_everywhere),
    _env_change(
        "logging.controller.tracing_filter", "debug", CONTROLLER, "TRACING_FILTER_DIRECTIVE"
    ),
    _env_change("logging.agent.tracing_filter", "warn", AGENT, "TRACING_FILTER_DIRECTIVE"),
    _env_change("logging.apiserver.tracing_filter", "error", APISERVER, "TRACING_FILTER_DIRECTIVE"),
    Change("resources.agent.resources", RESOURCES, _resources(AGENT)),
    Change("resources.apiserver.resources", RESOURCES, _resources(APISERVER)),
    Change("resources.controller.resources", RESOURCES, _resources(CONTROLLER)),
    Change("podLabels", {"team": "ops"}, _pod_labels({"team": "ops"})),
    _env_change("scheduler_time_zone", "Europe/Paris", CONTROLLER, "SCHEDULER_TIME_ZONE"),
    Change("drain_timeout_seconds", "1800", _drain_timeout_everywhere),
    _env_change(
        "apiserver_force_namespaces_allowed",
        "kube-system,ops",
        APISERVER,
        "APISERVER_FORCE_NAMESPACES_ALLOWED",
    ),
    _env_change("state_timeouts.idle_seconds", "240", CONTROLLER, "TIMEOUT_IDLE_SECONDS"),
    _env_change(
        "state_timeouts.staged_and_performed_update_seconds",
        "1440",
        CONTROLLER,
        "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS",
    ),
    _env_change(
        "state_timeouts.rebooted_into_update_seconds",
        "1200",
        CONTROLLER,
        "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS",
    ),
    _env_change(
        "state_timeouts.monitoring_update_seconds",
        "600",
        CONTROLLER,
        "TIMEOUT_MONITORING_UPDATE_SECONDS",
    ),
    Change("cluster_domain", "cluster.example", _cluster_domain_everywhere),
]
# Switches, checked above by their own renders.
TOGGLES = {
    "create_namespace",
    "prometheus.controller.serviceMonitor.enabled",
    "network_policy.enabled",
    # The observability kit's values, checked in test_observability_kit.py.
    *OBSERVABILITY_VALUES,
    # The notification values, checked in test_notification_chart.py.
    *NOTIFICATION_VALUES,
}


def _values_with(changes: list[Change]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for change in changes:
        *parents, last = change.path.split(".")
        target = values
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = change.value
    return values


def _leaf_paths(values: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _leaf_paths(value, f"{path}.")
        else:
            yield path


@pytest.fixture(scope="module")
def changed_render(helm: Helm) -> Rendered:
    """The chart rendered with every change at once."""
    return Rendered(helm.template(_values_with(CHANGES)))


def test_every_value_of_the_chart_is_covered_by_a_change_or_a_toggle() -> None:
    defaults = load_yaml((CHART / "values.yaml").read_text(encoding="utf-8"))
    changed = [change.path for change in CHANGES]
    uncovered = [
        leaf
        for leaf in _leaf_paths(defaults)
        if leaf not in TOGGLES and not any(leaf == p or leaf.startswith(f"{p}.") for p in changed)
    ]
    assert uncovered == []
    assert len(set(changed)) == len(changed)


@pytest.mark.parametrize("change", CHANGES, ids=[change.path for change in CHANGES])
def test_each_changed_value_reaches_what_it_configures(
    change: Change, changed_render: Rendered, manifest: Rendered
) -> None:
    assert change.check(changed_render)
    assert not change.check(manifest)


@pytest.mark.parametrize("version", [kubernetes_versions()[0], kubernetes_versions()[-1]])
def test_the_render_with_every_value_changed_still_validates(
    version: str, changed_render: Rendered
) -> None:
    problems = [kubernetes_problems(doc, version) or [] for doc in changed_render]
    assert [problem for found in problems for problem in found] == []
    assert [cert_manager_problems(doc) or [] for doc in changed_render] == [[]] * len(
        changed_render.docs
    )
