"""Policy lint: every rule that does nothing over the nodes is one finding naming its field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.domain.policy.effective_policy import EffectivePolicy, policy_from_spec
from brupop.domain.policy.policy_lint import lint_policy
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE

NOW = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)


def _node(name: str, ip: str = "10.0.0.5", opted_in: bool = True, **labels: str) -> Node:
    if opted_in:
        labels = {OPT_IN_LABEL: OPT_IN_VALUE, **labels}
    return Node(name=name, uid=f"uid-{name}", labels=labels, internal_ip=ip)


def _policy(**spec: Any) -> EffectivePolicy:
    return policy_from_spec(UpdatePolicySpec.model_validate(spec))


def _lines(policy: EffectivePolicy, nodes: list[Node]) -> list[str]:
    return [str(finding) for finding in lint_policy(policy, nodes, NOW)]


FLEET = [_node(f"node-0{i}", zone=f"z{i % 2}") for i in range(1, 5)]


def test_a_canary_selector_that_picks_no_opted_in_node_is_named() -> None:
    policy = _policy(canary={"selector": "brupop.bottlerocket.aws/canary=true", "soakSeconds": 60})
    labelled_but_not_opted_in = _node(
        "other", opted_in=False, **{"brupop.bottlerocket.aws/canary": "true"}
    )

    lines = _lines(policy, [*FLEET, labelled_but_not_opted_in])

    assert lines == [
        "spec.canary.selector: 'brupop.bottlerocket.aws/canary=true' picks none of the 4 "
        "opted-in nodes: there are no canaries"
    ]


def test_a_canary_selector_that_picks_some_nodes_is_fine() -> None:
    policy = _policy(canary={"selector": "zone=z1"})

    assert _lines(policy, FLEET) == []


def test_a_canary_count_of_the_whole_fleet_leaves_no_node_to_wait() -> None:
    lines = _lines(_policy(canary={"count": 4, "soakSeconds": 60}), FLEET)

    assert lines == ["spec.canary.count: 4 canaries of 4 opted-in nodes: none waits for a soak"]


def test_a_budget_grouped_by_a_label_no_node_has_is_named_with_its_index() -> None:
    budgets = [
        {"groupBy": "zone", "maxConcurrent": 1},
        {"groupBy": "topology.kubernetes.io/zone", "maxConcurrent": 1},
    ]

    lines = _lines(_policy(budgets=budgets), FLEET)

    assert lines == [
        "spec.budgets[1].groupBy: no opted-in node has the label "
        "'topology.kubernetes.io/zone': the 4 nodes form one group"
    ]


def test_a_window_that_does_not_open_in_the_next_30_days_is_named() -> None:
    windows = [
        {"cron": "* * 2-4 * * * *"},
        {"cron": "* * * 30 2 * *"},  # February 30th
        {"cron": "* * * * * * 2030", "timeZone": "Europe/Paris"},
    ]

    lines = _lines(_policy(windows=windows), FLEET)

    assert lines == [
        "spec.windows[1].cron: '* * * 30 2 * *' (UTC) does not open in the next 30 days",
        "spec.windows[2].cron: '* * * * * * 2030' (Europe/Paris) does not open in the next 30 days",
    ]


def test_a_probe_the_address_allowance_refuses_for_every_node_is_named() -> None:
    probes = [
        {"url": "http://{node_ip}:8080/healthz"},
        {"url": "http://169.254.169.254/latest"},
    ]

    lines = _lines(_policy(healthGate={"httpProbes": probes}), FLEET)

    assert lines == [
        "spec.healthGate.httpProbes[1].url: the controller refuses to connect: "
        "169.254.169.254 is a cloud metadata address (not allowed by PROBE_ALLOWED_NETWORKS), "
        "for every opted-in node"
    ]


def test_a_node_ip_probe_is_refused_only_for_the_nodes_whose_address_is_refused() -> None:
    nodes = [*FLEET, _node("loop", ip="127.0.0.1")]

    lines = _lines(_policy(healthGate={"httpProbes": [{"url": "http://{node_ip}/"}]}), nodes)

    assert lines == [
        "spec.healthGate.httpProbes[0].url: the controller refuses to connect: 127.0.0.1 is "
        "a loopback address (not allowed by PROBE_ALLOWED_NETWORKS), for 1 of 5 nodes"
    ]


def test_an_allowed_network_lifts_the_probe_finding() -> None:
    policy = _policy(healthGate={"httpProbes": [{"url": "http://127.0.0.1:9/"}]})

    findings = lint_policy(policy, FLEET, NOW, AddressAllowance.parse("127.0.0.0/8"))

    assert findings == ()


def test_a_prometheus_the_address_allowance_refuses_holds_every_start() -> None:
    policy = _policy(alertGate={"prometheusUrl": "http://kubernetes.default.svc:443"})

    lines = _lines(policy, FLEET)

    assert lines == [
        "spec.alertGate.prometheusUrl: the controller refuses to connect: "
        "kubernetes.default.svc is the cluster's API server (not allowed by "
        "PROBE_ALLOWED_NETWORKS): the gate holds every start"
    ]


def test_a_prometheus_name_that_needs_a_lookup_is_not_judged() -> None:
    policy = _policy(alertGate={"prometheusUrl": "http://prometheus.monitoring:9090"})

    assert _lines(policy, FLEET) == []


def test_no_policy_object_has_nothing_to_say() -> None:
    assert _lines(EffectivePolicy(), FLEET) == []


_LABEL_KEYS = st.sampled_from(["zone", "brupop.bottlerocket.aws/canary", OPT_IN_LABEL, "x"])
_NODES = st.lists(
    st.builds(
        Node,
        name=st.text(max_size=30),
        uid=st.just("uid"),
        labels=st.dictionaries(_LABEL_KEYS, st.text(max_size=10), max_size=4),
        internal_ip=st.none() | st.text(max_size=40) | st.ip_addresses().map(str),
    ),
    max_size=8,
)
_EVERY_RULE = _policy(
    canary={"selector": "brupop.bottlerocket.aws/canary=true"},
    budgets=[{"groupBy": "zone", "maxConcurrent": 1}],
    windows=[{"cron": "* * 2-4 * * * *", "timeZone": "Europe/Paris"}],
    healthGate={"httpProbes": [{"url": "http://{node_ip}:8080/"}, {"url": "https://{node_name}/"}]},
    alertGate={"prometheusUrl": "http://[::1]:9090"},
)


@settings(max_examples=150, deadline=2000)
@given(nodes=_NODES)
def test_lint_judges_any_nodes_without_raising_and_names_a_field_each_time(
    nodes: list[Node],
) -> None:
    findings = lint_policy(_EVERY_RULE, nodes, NOW)

    assert all(finding.field.startswith("spec.") and finding.message for finding in findings)
