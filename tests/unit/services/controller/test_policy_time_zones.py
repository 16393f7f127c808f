"""A policy whose window names a tzdata folder (`US`, `Europe`) as its time zone: `kubectl
apply` takes it (the CRD only bounds the length), so the controller must refuse it the way it
refuses any bad spec: the last good policy stays in force and `status.message` says why."""

from __future__ import annotations

from typing import Any

import pytest

from brupop.domain.policy.update_policy_status import PolicyPhase
from tests.unit.services.controller.fleet import Fleet

NAMESPACE = "brupop-bottlerocket-aws"


def _policy(paused: bool, time_zone: str) -> dict[str, Any]:
    window = {"cron": "* * * * * * *", "timeZone": time_zone}
    return {"metadata": {"name": "default"}, "spec": {"paused": paused, "windows": [window]}}


@pytest.mark.parametrize("zone", ["US", "America", "Europe", "Etc", "Asia"])
def test_a_window_in_a_tzdata_folder_keeps_the_last_good_policy_and_says_why(zone: str) -> None:
    fleet = Fleet(2)
    fleet.cluster.policies.apply(_policy(paused=True, time_zone="Europe/Paris"))
    controller = fleet.controller(1)
    controller.tick()

    fleet.cluster.policies.apply(_policy(paused=False, time_zone=zone))
    controller.tick()
    controller.tick()

    assert fleet.outside_idle() == 0, "the last good policy (paused) stays in force"
    status = fleet.cluster.policies.store.get(f"{NAMESPACE}/default").status
    assert status is not None
    assert status.phase is PolicyPhase.PAUSED
    assert status.message.startswith("The spec was not applied, the last good policy stays")
    assert f"spec.windows.0.timeZone: {zone!r} is a group of time zones" in status.message
