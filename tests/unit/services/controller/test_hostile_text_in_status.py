"""What a hostile Prometheus or probe target answers reaches the policy's status.message and
the nodes' REASON bounded and without terminal controls (escapes, C1, bidi overrides)."""

from __future__ import annotations

import re

from brupop.domain.policy.update_policy_status import MESSAGE_MAX_LENGTH
from tests.unit.services.controller.fleet import Fleet

NAMESPACE = "brupop-bottlerocket-aws"
PROMETHEUS = "http://prometheus.monitoring:9090"
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HOSTILE = "\x1b]0;owned\x07\x1b]52;c;cm0=\x07\r\x1b[1A\x1b[2Kall nodes healthy\u202e" + "x" * 3000


def test_a_hostile_alert_source_reason_is_cleaned_before_it_is_written() -> None:
    fleet = Fleet(2)
    policy = {"metadata": {"name": "default"}, "spec": {"alertGate": {"prometheusUrl": PROMETHEUS}}}
    fleet.cluster.policies.apply(policy)
    fleet.alerts.fail(PROMETHEUS, HOSTILE)
    controller = fleet.controller(1)

    controller.tick()

    status = fleet.cluster.policies.store.get(f"{NAMESPACE}/default").status
    assert status is not None and "all nodes healthy" in status.message
    assert CONTROLS.search(status.message) is None
    assert len(status.message) <= MESSAGE_MAX_LENGTH
    for row in controller.reports():
        assert CONTROLS.search(row.detail) is None, row.detail
