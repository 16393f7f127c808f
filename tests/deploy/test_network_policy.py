"""The chart's NetworkPolicies: the agents' API only from agent pods, the conversion webhook and
the probes from anywhere (the kube-apiserver is not a pod), the controller's metrics from the
namespaces a value selects; and the webhook's path from the CRD to the pod crosses an open port."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.network_reach import Source, may_reach
from tests.deploy.rendering import Doc, Helm, Rendered

NS = "brupop-bottlerocket-aws"
APISERVER_POD = {"brupop.bottlerocket.aws/component": "apiserver"}
CONTROLLER_POD = {"brupop.bottlerocket.aws/component": "brupop-controller"}
AGENT = Source(NS, {"brupop.bottlerocket.aws/component": "agent"})
CONTROLLER = Source(NS, CONTROLLER_POD)
OTHER_POD_HERE = Source(NS, {"app": "something-else"})
# A pod elsewhere that copies the agent's label: the label alone must not let it in.
LOOKALIKE = Source("default", {"brupop.bottlerocket.aws/component": "agent"})
MONITORING = Source("monitoring", {"app": "prometheus"})
KUBE_APISERVER = Source(address="172.16.0.10")  # not a pod
MONITORING_ONLY = {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}


def _to_apiserver(rendered: Rendered, source: Source, port: int) -> bool:
    return may_reach(rendered, source, NS, APISERVER_POD, port)


def _to_controller(rendered: Rendered, source: Source) -> bool:
    return may_reach(rendered, source, NS, CONTROLLER_POD, 8080)


def _container_port(rendered: Rendered, name: str) -> int:
    ports = rendered.container("Deployment", "brupop-apiserver")["ports"]
    (number,) = [port["containerPort"] for port in ports if port["name"] == name]
    return int(number)


def _pod_port(rendered: Rendered, port: int | str) -> int:
    """A container port of the apiserver, given by number or by name."""
    return port if isinstance(port, int) else _container_port(rendered, port)


def _service_target(rendered: Rendered, service_port: int) -> int:
    """The apiserver pod's port behind a port of the brupop-apiserver Service."""
    ports: list[Doc] = rendered.get("Service", "brupop-apiserver")["spec"]["ports"]
    (target,) = [entry["targetPort"] for entry in ports if entry["port"] == service_port]
    return _pod_port(rendered, target)


def _conversion_service(rendered: Rendered) -> Any:
    (crd,) = [
        crd
        for crd in rendered.of_kind("CustomResourceDefinition")
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook"
    ]
    return crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]


def test_only_agent_pods_reach_the_agents_api(manifest: Rendered) -> None:
    port = _container_port(manifest, "https")
    assert _to_apiserver(manifest, AGENT, port)
    for stranger in (CONTROLLER, OTHER_POD_HERE, LOOKALIKE, MONITORING, KUBE_APISERVER):
        assert not _to_apiserver(manifest, stranger, port), stranger


def test_anyone_reaches_the_webhook_port(manifest: Rendered) -> None:
    port = _container_port(manifest, "webhook")
    for source in (AGENT, LOOKALIKE, MONITORING, KUBE_APISERVER):
        assert _to_apiserver(manifest, source, port), source


def test_the_kube_apiserver_reaches_the_conversion_webhook_through_the_service(
    manifest: Rendered,
) -> None:
    service = _conversion_service(manifest)
    assert (service["name"], service["namespace"]) == ("brupop-apiserver", NS)
    target = _service_target(manifest, service["port"])

    assert target == int(manifest.env("Deployment", "brupop-apiserver")["APISERVER_WEBHOOK_PORT"])
    assert _to_apiserver(manifest, KUBE_APISERVER, target)


def test_the_agents_reach_the_api_through_the_service_they_are_given(manifest: Rendered) -> None:
    service_port = int(manifest.env("DaemonSet", "brupop-agent")["APISERVER_SERVICE_PORT"])
    target = _service_target(manifest, service_port)

    assert target == int(manifest.env("Deployment", "brupop-apiserver")["APISERVER_INTERNAL_PORT"])
    assert _to_apiserver(manifest, AGENT, target)


def test_the_probes_use_the_port_open_to_anyone(manifest: Rendered) -> None:
    container = manifest.container("Deployment", "brupop-apiserver")
    for probe, path in (("livenessProbe", "/ping"), ("readinessProbe", "/readyz")):
        check = container[probe]["httpGet"]
        assert (check["path"], check["scheme"]) == (path, "HTTPS")
        assert _to_apiserver(manifest, KUBE_APISERVER, _pod_port(manifest, check["port"]))


def test_the_controller_metrics_are_open_to_every_namespace_by_default(manifest: Rendered) -> None:
    assert _to_controller(manifest, MONITORING)
    assert _to_controller(manifest, OTHER_POD_HERE)
    assert not _to_controller(manifest, KUBE_APISERVER)


def test_a_namespace_selector_limits_who_reads_the_controller_metrics(helm: Helm) -> None:
    values = {"network_policy": {"metrics_namespace_selector": MONITORING_ONLY}}
    rendered = Rendered(helm.template(values))

    assert _to_controller(rendered, MONITORING)
    assert not _to_controller(rendered, Source("default", {"app": "prometheus"}))
    assert not _to_controller(rendered, OTHER_POD_HERE)


def test_extra_sources_let_the_control_plane_reach_the_controller(helm: Helm) -> None:
    extra = [{"ipBlock": {"cidr": "172.16.0.0/16"}}]
    rendered = Rendered(helm.template({"network_policy": {"controller_extra_sources": extra}}))

    assert _to_controller(rendered, KUBE_APISERVER)
    assert not _to_controller(rendered, Source(address="192.168.1.1"))


@pytest.mark.parametrize(("internal", "webhook"), [("9443", "9444"), ("8443", "10443")])
def test_the_policy_follows_the_chosen_ports(helm: Helm, internal: str, webhook: str) -> None:
    values = {"apiserver_internal_port": internal, "apiserver_webhook_port": webhook}
    rendered = Rendered(helm.template(values))

    assert _to_apiserver(rendered, AGENT, int(internal))
    assert not _to_apiserver(rendered, KUBE_APISERVER, int(internal))
    assert _to_apiserver(rendered, KUBE_APISERVER, int(webhook))
    assert _service_target(rendered, _conversion_service(rendered)["port"]) == int(webhook)


def test_no_policy_is_rendered_when_disabled(helm: Helm) -> None:
    rendered = Rendered(helm.template({"network_policy": {"enabled": False}}))

    assert rendered.of_kind("NetworkPolicy") == []
    assert _to_apiserver(rendered, KUBE_APISERVER, 8443)


def test_agent_pods_have_their_own_address_for_the_policy_to_tell_them_apart(
    manifest: Rendered,
) -> None:
    # On the host's network an agent's traffic would come from the node, not from a pod the
    # apiserver's policy selects.
    assert not manifest.pod_spec("DaemonSet", "brupop-agent").get("hostNetwork", False)
