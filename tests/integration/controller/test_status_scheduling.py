"""`brupop status` and fleet-wide scheduling: the controller's `/status` and
`brupop_max_concurrent_update` show the limit it applies (the policy's `maxConcurrent`), and
its `scheduling` facts (budgets in use, the expected update time and its source, the clock's
hold) become lines above the table; a controller that sends none of them gives no line."""

from __future__ import annotations

import json
import urllib.request
from datetime import timedelta
from typing import Any

import pytest

from brupop.cli.status.main import main
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from tests.support.controller_surface import serve_controller
from tests.support.probe_server import ProbeServer
from tests.unit.services.controller.fleet import START, Fleet

ZONE = "topology.kubernetes.io/zone"
FREEZE = {
    "start": START.isoformat(),
    "end": (START + timedelta(days=2)).isoformat(),
    "reason": "holiday freeze",
}


def _policy(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "default"}, "spec": spec}


def _zoned_fleet(**spec: Any) -> Fleet:
    fleet = Fleet(3)
    for node, zone in {"node-00": "zone-a", "node-01": "zone-a", "node-02": "zone-b"}.items():
        fleet.cluster.nodes.set_labels(node, {ZONE: zone})
    budget = {"groupBy": ZONE, "maxConcurrent": 1}
    fleet.cluster.policies.apply(_policy(budgets=[budget], **spec))
    return fleet


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


def _table_output(fleet: Fleet, capsys: pytest.CaptureFixture[str]) -> list[str]:
    with serve_controller(fleet, limit=5) as (url, _):
        capsys.readouterr()  # the controller's log lines of its first pass
        assert main(["--url", url]) == 0
    return capsys.readouterr().out.splitlines()


def test_status_and_the_limit_metric_show_the_policys_percentage_limit() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(_policy(maxConcurrent="50%"))
    with serve_controller(fleet, limit=1) as (url, _):
        document = json.loads(_get(f"{url}/status"))
        metrics = _get(f"{url}/metrics").splitlines()
    assert document["max_concurrent_update"] == "2"
    assert "brupop_max_concurrent_update 2.0" in metrics


def test_the_expected_update_time_is_a_metric() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(_policy())
    durations = tuple(60 * minutes for minutes in range(3, 23))  # 3 to 22 minutes
    fleet.cluster.policies.update_status(UpdatePolicyStatus(update_durations=durations))
    with serve_controller(fleet) as (url, _):
        metrics = _get(f"{url}/metrics").splitlines()
    assert "brupop_expected_update_seconds 1200.0" in metrics  # 20 minutes: the 18th of 20


def test_the_table_shows_the_budgets_the_expected_time_and_the_hold_above_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _table_output(_zoned_fleet(blackouts=[FREEZE]), capsys)
    assert lines[:4] == [
        "Budget zone: zone-a 0/1, zone-b 0/1",
        "Expected update time: 15m (no history yet)",
        "Starts held: blackout until 2026-01-07T10:00:00Z: holiday freeze",
        lines[3],
    ]
    assert lines[3].startswith("NODE")


def test_the_expected_time_names_the_updates_it_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    fleet = _zoned_fleet()
    durations = tuple(60 * minutes for minutes in range(3, 23))
    fleet.cluster.policies.update_status(UpdatePolicyStatus(update_durations=durations))
    lines = _table_output(fleet, capsys)
    assert lines[:2] == [
        "Budget zone: zone-a 1/1, zone-b 1/1",
        "Expected update time: 20m (p90 of the last 20 updates)",
    ]
    assert lines[2].startswith("NODE")


def test_the_json_output_carries_the_same_scheduling_facts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve_controller(_zoned_fleet(blackouts=[FREEZE]), limit=5) as (url, _):
        capsys.readouterr()
        assert main(["--url", url, "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["scheduling"] == {
        "budgets": [
            {"budget": ZONE, "group": "zone-a", "in_use": 0, "limit": 1},
            {"budget": ZONE, "group": "zone-b", "in_use": 0, "limit": 1},
        ],
        "expected_update": {"seconds": 900, "from_updates": 0, "finish_by": True},
        "hold": {
            "reason": "blackout",
            "detail": "blackout until 2026-01-07T10:00:00Z: holiday freeze",
        },
    }


def test_an_older_controller_without_scheduling_facts_gives_no_line_and_no_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    older = {
        "identity": "controller-1",
        "leader": True,
        "max_concurrent_update": "1",
        "schedule": {"expression": "* * * * * * *", "kind": "windowed", "time_zone": "UTC"},
        "nodes": [{"node": "node-00", "state": "Idle", "detail": "no update offered"}],
    }
    with ProbeServer() as server:
        server.answers["/status"] = (200, json.dumps(older).encode())
        assert main(["--url", server.base_url]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("NODE")
    assert err == ""
