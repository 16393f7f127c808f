"""The update policy's spec: documented defaults, camelCase on the wire, bounds and syntax."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from brupop.domain.cluster.label_selector import SelectorOperator
from brupop.domain.policy.update_policy import (
    AlertGateSpec,
    CanarySpec,
    HealthGateSpec,
    HttpProbeSpec,
    RebootHooksSpec,
    UpdatePolicySpec,
)


def test_an_empty_spec_pauses_nothing_gates_nothing_and_halts_after_one_failure() -> None:
    spec = UpdatePolicySpec.model_validate({})
    assert spec.paused is False
    assert (spec.health_gate, spec.canary, spec.alert_gate) == (None, None, None)
    assert spec.halt_after_failures == 1


def test_an_empty_health_gate_takes_every_documented_default() -> None:
    gate = UpdatePolicySpec.model_validate({"healthGate": {}}).health_gate
    assert gate == HealthGateSpec(
        timeout_seconds=600,
        require_node_ready=True,
        require_daemon_set_pods_ready=True,
        require_evicted_workloads_recovered=True,
        http_probes=(),
    )
    probe = HttpProbeSpec.model_validate({"url": "http://{node_ip}/healthz"})
    assert (probe.expect_status, probe.timeout_seconds) == (200, 5)


def test_the_wire_form_is_camel_case_and_reads_back_equal() -> None:
    spec = UpdatePolicySpec(
        paused=True,
        health_gate=HealthGateSpec(http_probes=(HttpProbeSpec(url="http://{node_ip}:8080/"),)),
        canary=CanarySpec(count=2, soak_seconds=60),
        alert_gate=AlertGateSpec(prometheus_url="http://prom:9090", matchers=('severity="page"',)),
        hooks=RebootHooksSpec(before_reboot=("ceph-noout",)),
    )
    wire = spec.model_dump(mode="json")
    assert list(wire) == [
        "paused",
        "healthGate",
        "haltAfterFailures",
        "canary",
        "alertGate",
        "hooks",
        "maxConcurrent",
        "budgets",
        "windows",
        "blackouts",
        "finishBy",
        "version",
        "minNodeAgeSeconds",
        "blockingPodSelector",
        "order",
        "capacityCheck",
        "drain",
        "prestage",
    ]
    assert wire["hooks"] == {
        "beforeReboot": ["ceph-noout"],
        "afterReboot": [],
        "timeoutSeconds": 600,
    }
    assert list(wire["healthGate"]) == [
        "timeoutSeconds",
        "bootstrapAllowanceSeconds",
        "requireNodeReady",
        "requireDaemonSetPodsReady",
        "requireEvictedWorkloadsRecovered",
        "httpProbes",
    ]
    assert wire["healthGate"]["httpProbes"][0] == {
        "url": "http://{node_ip}:8080/",
        "expectStatus": 200,
        "timeoutSeconds": 5,
    }
    assert wire["alertGate"]["prometheusUrl"] == "http://prom:9090"
    assert UpdatePolicySpec.model_validate(wire) == spec


def test_a_canary_selector_and_alert_matchers_are_available_parsed() -> None:
    canary = CanarySpec(selector="role in (canary),zone=a")
    selector = canary.label_selector
    assert selector is not None
    assert [r.operator for r in selector.requirements] == [
        SelectorOperator.IN,
        SelectorOperator.EQUALS,
    ]
    assert CanarySpec(count=3).label_selector is None
    gate = AlertGateSpec(prometheus_url="http://prom:9090", matchers=('severity=~"page|critical"',))
    assert gate.alert_matchers[0].matches({"severity": "page"})


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"canary": {"soakSeconds": 60}}, "canary"),
        ({"canary": {"count": 1, "selector": "a=b"}}, "canary"),
        ({"canary": {"selector": "a in (b"}}, "canary.selector"),
        ({"healthGate": {"httpProbes": [{"url": "http://{ip}/"}]}}, "healthGate.httpProbes.0.url"),
        ({"alertGate": {"prometheusUrl": "http://p:9090", "matchers": ["a=b"]}}, "alertGate"),
        ({"alertGate": {"prometheusUrl": "p:9090"}}, "alertGate.prometheusUrl"),
        ({"paused": "true"}, "paused"),
        ({"paused": 1}, "paused"),
        ({"haltAfterFailures": "2"}, "haltAfterFailures"),
        ({"haltAfterFailures": 2.0}, "haltAfterFailures"),
        ({"healthGate": {"timeoutSeconds": float("inf")}}, "healthGate.timeoutSeconds"),
        ({"healthGate": {"timeoutSeconds": 10**9}}, "healthGate.timeoutSeconds"),
        ({"healthGate": {"requireNodeReady": "no"}}, "healthGate.requireNodeReady"),
        ({"pasued": True}, "pasued"),
        ({"canary": {"count": 1, "soak": 5}}, "canary.soak"),
    ],
)
def test_a_spec_breaking_a_rule_is_refused_naming_the_field(
    spec: dict[str, Any], where: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        UpdatePolicySpec.model_validate(spec)
    locations = [".".join(str(p) for p in error["loc"]) for error in refused.value.errors()]
    assert any(location.startswith(where) for location in locations), locations


def test_the_spec_is_frozen() -> None:
    spec = UpdatePolicySpec()
    with pytest.raises(ValidationError):
        spec.paused = True


def test_a_canary_is_written_without_the_choice_it_did_not_make() -> None:
    assert CanarySpec(count=2).model_dump(mode="json") == {"count": 2, "soakSeconds": 0}
    assert CanarySpec(selector="role=canary").model_dump(mode="json") == {
        "selector": "role=canary",
        "soakSeconds": 0,
    }


@pytest.mark.parametrize(
    "hooks",
    [
        {"beforeReboot": [f"hook-{i}" for i in range(11)]},
        {"afterReboot": ["Not_A_Label"]},
        {"beforeReboot": ["x" * 50]},
        {"beforeReboot": ["-leading-dash"]},
        {"timeoutSeconds": 0},
        {"timeoutSeconds": 86_401},
    ],
)
def test_reboot_hooks_out_of_bounds_are_refused(hooks: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        UpdatePolicySpec.model_validate({"hooks": hooks})


def test_reboot_hooks_default_to_ten_minutes_and_accept_ten_dns_label_names() -> None:
    names = [f"hook-{i}" for i in range(10)]
    hooks = UpdatePolicySpec.model_validate({"hooks": {"afterReboot": names}}).hooks
    assert hooks == RebootHooksSpec(
        before_reboot=(), after_reboot=tuple(names), timeout_seconds=600
    )
