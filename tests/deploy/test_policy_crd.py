"""The BottlerocketUpdatePolicy CRD: names and columns, and a schema that accepts what the models
write and refuses, at apply time, what the kube-apiserver can refuse."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.cli.crd.policy_definition import policy_custom_resource_definition
from brupop.domain.policy.policy_object import policy_from_object, policy_object
from brupop.domain.policy.update_policy import (
    AlertGateSpec,
    CanarySpec,
    HealthGateSpec,
    HttpProbeSpec,
    UpdatePolicySpec,
)
from brupop.domain.policy.update_policy_status import (
    CanaryProgress,
    HaltReason,
    NodeCounts,
    PolicyPhase,
    UpdatePolicyStatus,
)
from tests.deploy.policy_schema import policy_problems

FULL_POLICY: dict[str, Any] = {
    "apiVersion": "brupop.bottlerocket.aws/v1",
    "kind": "BottlerocketUpdatePolicy",
    "metadata": {"name": "default", "namespace": "brupop-bottlerocket-aws"},
    "spec": {
        "paused": False,
        "healthGate": {
            "timeoutSeconds": 900,
            "bootstrapAllowanceSeconds": 300,
            "requireNodeReady": True,
            "requireDaemonSetPodsReady": True,
            "requireEvictedWorkloadsRecovered": False,
            "httpProbes": [
                {"url": "http://{node_ip}:10256/healthz", "expectStatus": 200, "timeoutSeconds": 3}
            ],
        },
        "haltAfterFailures": 2,
        "canary": {"selector": "brupop.bottlerocket.aws/canary=true", "soakSeconds": 1800},
        "alertGate": {
            "prometheusUrl": "http://prometheus.monitoring.svc:9090",
            "matchers": ['severity="critical"', 'namespace=~"prod-.*"'],
            "ignore": ["Watchdog"],
        },
        "hooks": {
            "beforeReboot": ["ceph-noout"],
            "afterReboot": ["ceph-noout", "change-ticket"],
            "timeoutSeconds": 900,
        },
        "maxConcurrent": "10%",
        "budgets": [{"groupBy": "topology.kubernetes.io/zone", "maxConcurrent": 1}],
        "windows": [{"cron": "* * 2-5 * * Mon-Fri *", "timeZone": "Europe/Paris"}],
        "blackouts": [
            {"start": "2026-12-20T00:00:00Z", "end": "2027-01-04T00:00:00Z", "reason": "freeze"}
        ],
        "finishBy": True,
        "version": {"pin": "1.20.1", "minReleaseAgeHours": 48},
        "minNodeAgeSeconds": 3600,
        "blockingPodSelector": "app=batch",
        "order": "cheapest-first",
        "capacityCheck": True,
        "drain": {
            "gracePeriodSeconds": 30,
            "timeoutSeconds": 600,
            "onTimeout": "force",
            "forceNamespaces": ["batch"],
        },
        "prestage": {"enabled": True, "maxConcurrent": 2, "startBeforeSeconds": 7200},
    },
}


def _version() -> dict[str, Any]:
    (version,) = policy_custom_resource_definition()["spec"]["versions"]
    return dict(version)


def _changed(path: str, value: object) -> dict[str, Any]:
    """FULL_POLICY with the field at dotted `path` (list indexes as numbers) set or removed."""
    policy = copy.deepcopy(FULL_POLICY)
    *parents, last = path.split(".")
    target: Any = policy
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return policy


def test_the_policy_crd_is_namespaced_v1_in_brupops_group() -> None:
    crd = policy_custom_resource_definition()
    assert crd["metadata"]["name"] == "bottlerocketupdatepolicies.brupop.bottlerocket.aws"
    assert crd["spec"]["group"] == "brupop.bottlerocket.aws"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["kind"] == "BottlerocketUpdatePolicy"
    version = _version()
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}


def test_kubectl_get_shows_phase_message_and_age() -> None:
    columns = [
        (c["name"], c["jsonPath"], c["type"]) for c in _version()["additionalPrinterColumns"]
    ]
    assert columns == [
        ("Phase", ".status.phase", "string"),
        ("Message", ".status.message", "string"),
        ("Age", ".metadata.creationTimestamp", "date"),
    ]


def test_spec_fields_are_the_models_camel_case_aliases_and_none_is_required() -> None:
    spec = _version()["schema"]["openAPIV3Schema"]["properties"]["spec"]
    # The order itself is asserted once, in the unit test of the wire form; here the schema
    # must list the same names, in the same order, as the model writes them.
    assert list(spec["properties"]) == list(UpdatePolicySpec().model_dump(mode="json"))
    assert "required" not in spec
    assert "required" not in _version()["schema"]["openAPIV3Schema"]


def test_a_full_policy_fits_the_schema_and_reads_back_unchanged() -> None:
    assert policy_problems(FULL_POLICY) == []
    policy = policy_from_object(FULL_POLICY)
    assert policy.problem is None
    assert policy_object(policy) == FULL_POLICY


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "brupop.bottlerocket.aws/v1", "kind": "BottlerocketUpdatePolicy"},
        {"spec": {}},
        {"spec": {"paused": True}},
        {"spec": {"healthGate": {}}},
        {"spec": {"canary": {"count": 3}}},
        {"spec": {"alertGate": {"prometheusUrl": "https://prom.example:9090/"}}},
    ],
)
def test_small_policies_fit_the_schema(obj: dict[str, Any]) -> None:
    with_meta = {"metadata": {"name": "default"}, **obj}
    assert policy_problems(with_meta) == []
    assert policy_from_object(with_meta).problem is None


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.paused", "yes"),
        ("spec.pause", True),
        ("spec.healthGate.timeoutSeconds", -1),
        ("spec.healthGate.timeoutSeconds", 0),
        ("spec.healthGate.timeoutSeconds", 86_401),
        ("spec.healthGate.timeoutSeconds", 1.5),
        ("spec.healthGate.timeout", 10),
        ("spec.healthGate.httpProbes", [{"url": "http://a/"}] * 11),
        ("spec.healthGate.httpProbes.0.url", ...),
        ("spec.healthGate.httpProbes.0.url", "http://a/" + "x" * 2048),
        ("spec.healthGate.httpProbes.0.expectStatus", 99),
        ("spec.healthGate.httpProbes.0.expectStatus", 600),
        ("spec.healthGate.httpProbes.0.timeoutSeconds", 61),
        ("spec.healthGate.httpProbes.0.timeoutSeconds", 0),
        ("spec.haltAfterFailures", 0),
        ("spec.haltAfterFailures", 1001),
        ("spec.canary.count", 0),
        ("spec.canary.soakSeconds", -5),
        ("spec.canary.soakSeconds", 7 * 86_400 + 1),
        ("spec.canary.selector", ""),
        ("spec.canary.count", 2),
        ("spec.canary.selector", ...),
        ("spec.canary.selector", "a=b," * 300),
        ("spec.alertGate.prometheusUrl", ...),
        ("spec.alertGate.matchers", ['a="b"'] * 21),
        ("spec.alertGate.matchers", [""]),
        ("spec.alertGate.ignore", ["x"] * 101),
        ("spec.alertGate.ignore", [7]),
        ("spec.hooks.beforeReboot", [f"h{i}" for i in range(11)]),
        ("spec.hooks.afterReboot", ["Ceph_Noout"]),
        ("spec.hooks.afterReboot", ["x" * 50]),
        ("spec.hooks.timeoutSeconds", 0),
        ("spec.hooks.timeoutSeconds", 86_401),
        ("spec.maxConcurrent", 1.5),
        ("spec.maxConcurrent", True),
        ("spec.budgets", [{"groupBy": "zone", "maxConcurrent": 1}] * 11),
        ("spec.budgets.0.groupBy", ...),
        ("spec.budgets.0.maxConcurrent", [1]),
        ("spec.windows", [{"cron": "* * * * * * *"}] * 11),
        ("spec.windows.0.cron", ...),
        ("spec.windows.0.timeZone", "x" * 65),
        ("spec.blackouts.0.reason", "x" * 254),
        ("spec.finishBy", "no"),
        ("spec.version.minReleaseAgeHours", -1),
        ("spec.version.minReleaseAgeHours", 24 * 365 + 1),
        ("spec.minNodeAgeSeconds", -1),
        ("spec.order", "random"),
        ("spec.capacityCheck", 1),
        ("spec.drain.onTimeout", "delete"),
        ("spec.drain.timeoutSeconds", 0),
        ("spec.drain.forceNamespaces", ["Kube_System"]),
        ("spec.prestage.maxConcurrent", 0),
        ("spec.prestage.startBeforeSeconds", -1),
        ("spec.prestage.startBeforeSeconds", 30 * 86_400 + 1),
        ("spec.prestage.enabled", "yes"),
        ("spec.prestage.startBefore", 60),
        ("status", {"phase": "Stopped"}),
        ("status", {"phase": "Idle", "message": "x" * 1025}),
        ("status", {"observedGeneration": -1}),
    ],
)
def test_the_schema_refuses_what_the_apiserver_can_refuse_and_so_do_the_models(
    path: str, value: object
) -> None:
    bad = _changed(path, value)
    assert policy_problems(bad) != []
    if path.startswith("spec"):
        assert policy_from_object(bad).spec is None


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("spec.canary.selector", "zone in (a,"),
        ("spec.healthGate.httpProbes.0.url", "http://{node}/healthz"),
        ("spec.healthGate.httpProbes.0.url", "ftp://{node_ip}/"),
        ("spec.alertGate.matchers", ["severity=critical"]),
        ("spec.alertGate.matchers", ['job=~"(unclosed"']),
        ("spec.alertGate.prometheusUrl", "prometheus:9090"),
        ("spec.maxConcurrent", 0),
        ("spec.maxConcurrent", "0%"),
        ("spec.maxConcurrent", "150%"),
        ("spec.maxConcurrent", "three"),
        ("spec.budgets.0.maxConcurrent", "5 %"),
        ("spec.budgets.0.groupBy", "not a key"),
        ("spec.windows.0.cron", "* * 25 * * * *"),
        ("spec.windows.0.cron", "0 0 2 * * * *"),
        ("spec.windows.0.cron", "@daily"),
        ("spec.windows.0.timeZone", "Mars/Olympus_Mons"),
        ("spec.blackouts.0.end", "2026-12-19T00:00:00Z"),
        ("spec.version.pin", "latest"),
        ("spec.blockingPodSelector", "app in (a,"),
    ],
)
def test_what_the_schema_cannot_refuse_the_models_report_as_a_problem(
    path: str, value: object
) -> None:
    bad = _changed(path, value)
    assert policy_problems(bad) == []
    policy = policy_from_object(bad)
    assert policy.spec is None
    assert policy.problem is not None and policy.problem.startswith(path.rsplit(".", 1)[0])


def test_every_status_the_controller_can_write_fits_the_schema() -> None:
    halted = UpdatePolicyStatus(
        phase=PolicyPhase.HALTED,
        message="Halted: node-b failed its health gate (nodeReady).",
        observed_generation=4,
        halted_at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC),
        halt_reason=HaltReason(node="node-b", check="nodeReady", detail="NotReady for 600 s"),
        failures=1,
        canary=CanaryProgress(
            nodes=2, updated=2, soak_ends_at=datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
        ),
        nodes=NodeCounts(idle=7, monitoring_update=1, error_reset=1),
    )
    for status in (UpdatePolicyStatus(), halted):
        written = {**FULL_POLICY, "status": status.model_dump(mode="json")}
        assert policy_problems(written) == []
        assert policy_from_object(written).status == status


@pytest.mark.parametrize("section", ["healthGate", "canary", "alertGate"])
def test_a_section_written_as_null_is_left_out(section: str) -> None:
    nulled = _changed(f"spec.{section}", None)
    assert policy_problems(nulled) == []
    spec = policy_from_object(nulled).spec
    assert spec is not None and getattr(spec, _snake(section)) is None


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def test_the_default_spec_as_written_fits_the_schema() -> None:
    spec = UpdatePolicySpec().model_dump(mode="json")
    assert policy_problems({"metadata": {"name": "default"}, "spec": spec}) == []


_SECONDS = st.integers(1, 86_400)
_PROBES = st.builds(
    HttpProbeSpec,
    url=st.sampled_from(
        [
            "http://{node_ip}:10256/healthz",
            "https://check.example/{node_name}",
            "http://[{node_ip}]/",
        ]
    ),
    expect_status=st.integers(100, 599),
    timeout_seconds=st.integers(1, 60),
)
_GATES = st.builds(
    HealthGateSpec,
    timeout_seconds=_SECONDS,
    require_node_ready=st.booleans(),
    require_daemon_set_pods_ready=st.booleans(),
    require_evicted_workloads_recovered=st.booleans(),
    http_probes=st.lists(_PROBES, max_size=10).map(tuple),
)
_CANARIES = st.one_of(
    st.builds(CanarySpec, count=st.integers(1, 1000), soak_seconds=st.integers(0, 604_800)),
    st.builds(
        CanarySpec,
        selector=st.sampled_from(["role=canary", "zone in (a,b),!spot", "example.com/canary"]),
        soak_seconds=st.integers(0, 604_800),
    ),
)
_ALERT_GATES = st.builds(
    AlertGateSpec,
    # builds() fills a required field by its wire name
    prometheusUrl=st.sampled_from(["http://prom:9090", "https://prom.example/api/"]),
    matchers=st.lists(
        st.sampled_from(['severity="critical"', 'job!~"test-.*"', 'team!=""']), max_size=20
    ).map(tuple),
    ignore=st.lists(st.text(min_size=1, max_size=20), max_size=5).map(tuple),
)
_SPECS = st.builds(
    UpdatePolicySpec,
    paused=st.booleans(),
    health_gate=st.none() | _GATES,
    halt_after_failures=st.integers(1, 1000),
    canary=st.none() | _CANARIES,
    alert_gate=st.none() | _ALERT_GATES,
)


@given(spec=_SPECS)
def test_any_spec_the_models_can_write_fits_the_schema_and_reads_back_equal(
    spec: UpdatePolicySpec,
) -> None:
    for wire in (spec.model_dump(mode="json"), spec.model_dump(mode="json", exclude_none=True)):
        obj = {"metadata": {"name": "default"}, "spec": wire}
        assert policy_problems(obj) == []
        assert policy_from_object(obj).spec == spec
