"""RolloutNotices never raises into the controller's loop, whatever the notifier does."""

from __future__ import annotations

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.reporting.notifications import Notification
from brupop.services.controller.runtime.rollout_notices import RolloutNotices
from tests.fakes.clock import FakeClock


class BrokenNotifier:
    def __init__(self) -> None:
        self.calls = 0

    def notify(self, notification: Notification) -> None:
        self.calls += 1
        raise RuntimeError("the notifier is broken")


def test_a_notifier_that_raises_never_reaches_the_controller() -> None:
    clock = FakeClock()
    notifier = BrokenNotifier()
    notices = RolloutNotices(notifier, clock, InMemoryCluster(clock=clock).pods)
    notices.leader(True)
    notices.hosts({"Idle": 1}, {"1.19.0": 1})
    notices.event(ClusterEvent("brs-n", "ns", "UpdateStarted", "Starting the update to 1.20.0"))
    notices.event(ClusterEvent("brs-n", "ns", "UpdateCompleted", "Now running 1.20.0"))
    notices.fleet(paused=False, halted=False)
    notices.fleet(paused=True)
    notices.waiting({"drain_blocked": 1})
    assert notifier.calls == 3, "each moment was tried, and each failure stayed here"


class KeptNotifier:
    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def notify(self, notification: Notification) -> None:
        self.sent.append(notification)


def test_a_rollout_started_on_the_first_pass_counts_the_nodes_it_starts_toward() -> None:
    clock = FakeClock()
    notifier = KeptNotifier()
    notices = RolloutNotices(notifier, clock, InMemoryCluster(clock=clock).pods)
    notices.leader(True)
    # The first pass starts a node before it publishes the hosts per version.
    notices.event(ClusterEvent("brs-n", "ns", "UpdateStarted", "Starting the update to 1.20.0"))
    notices.hosts({"Idle": 2, "StagedAndPerformedUpdate": 1}, {"1.19.0": 3})

    (started,) = notifier.sent
    assert started.summary == "Rollout of Bottlerocket 1.20.0 started (3 nodes)"
    assert started.counts == {"nodes": 3, "updated": 0}
