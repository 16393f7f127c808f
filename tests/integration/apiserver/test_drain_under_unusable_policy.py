"""A drain while the `default` policy names a tzdata folder (`US`) as a window's time zone: the
apiserver refuses that spec like any bad one and drains by the environment's settings, rather
than answering 500."""

from __future__ import annotations

import pytest

from tests.integration.apiserver.conftest import Rig, agent_pod


@pytest.mark.parametrize("zone", ["US", "Europe"])
def test_a_drain_under_a_window_in_a_tzdata_folder_uses_the_environments_drain(
    rig: Rig, zone: str
) -> None:
    rig.cluster.add_pod("default", "web-0", "n1")
    window = {"cron": "* * * * * * *", "timeZone": zone}
    drain = {"gracePeriodSeconds": 4}
    spec = {"windows": [window], "drain": drain}
    rig.cluster.policies.apply({"metadata": {"name": "default"}, "spec": spec})

    rig.client("n1").cordon_and_drain()

    assert {pod.name for pod in rig.cluster.pods.list_on_node("n1")} == {agent_pod("n1")}
    grace = rig.cluster.pods.eviction_grace_periods["default/web-0"]
    assert grace is None, "the pod's own grace period, not the unusable policy's 4 s"
