"""Leader election over a Lease: one holder, takeover only after expiry, quick hand-over."""

from __future__ import annotations

import dataclasses

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Lease
from brupop.ports.cluster.lease_store import LeaseStore
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME, LeaderElector
from tests.fakes.clock import FakeClock

NS = "brupop-bottlerocket-aws"


def _pair() -> tuple[FakeClock, InMemoryCluster, LeaderElector, LeaderElector]:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)

    def elector(identity: str) -> LeaderElector:
        return LeaderElector(cluster.leases, clock, namespace=NS, identity=identity)

    return clock, cluster, elector("a"), elector("b")


def test_the_first_replica_creates_the_lease_and_leads() -> None:
    _, cluster, a, b = _pair()
    assert a.ensure()
    assert not b.ensure()
    assert cluster.leases.get(NS, DEFAULT_LEASE_NAME).holder == "a"


def test_the_leader_renews_every_renew_interval_and_keeps_leading() -> None:
    clock, cluster, a, b = _pair()
    a.ensure()
    b.ensure()
    for _ in range(20):
        clock.advance(5)
        assert a.ensure()
        assert not b.ensure()
    assert cluster.leases.get(NS, DEFAULT_LEASE_NAME).holder == "a"


def test_a_leader_that_cannot_renew_stops_acting_before_anyone_can_take_over() -> None:
    clock, _, a, b = _pair()
    a.ensure()
    b.ensure()
    clock.advance(9.9)
    assert a.is_leader()
    clock.advance(0.2)
    assert not a.is_leader(), "10 s without a renewal (lease 15 s - renew 5 s)"
    assert not b.ensure()


def test_a_candidate_takes_over_only_after_a_whole_lease_without_renewals() -> None:
    clock, cluster, a, b = _pair()
    a.ensure()
    b.ensure()  # first look at the lease
    clock.advance(15)
    assert not b.ensure()
    clock.advance(4.9)
    assert not b.ensure(), "not due yet: a candidate looks every lease and renew interval"
    clock.advance(0.1)
    assert b.ensure()
    lease = cluster.leases.get(NS, DEFAULT_LEASE_NAME)
    assert (lease.holder, lease.transitions) == ("b", 1)
    clock.advance(5)
    assert not a.ensure(), "the old leader finds the lease taken and follows"


def test_a_released_lease_is_taken_at_the_next_try() -> None:
    clock, cluster, a, b = _pair()
    a.ensure()
    b.ensure()
    a.release()
    assert not a.is_leader()
    assert cluster.leases.get(NS, DEFAULT_LEASE_NAME).holder is None
    clock.advance(20)
    assert b.ensure()


def test_a_renewal_that_meets_someone_elses_write_loses_leadership_at_once() -> None:
    clock, cluster, a, _ = _pair()
    a.ensure()
    lease = cluster.leases.get(NS, DEFAULT_LEASE_NAME)
    cluster.leases.replace(dataclasses.replace(lease, holder="intruder"))
    clock.advance(5)
    assert not a.ensure()


def test_tries_are_spaced_by_the_renew_interval() -> None:
    clock, _, a, _ = _pair()
    a.ensure()
    assert a.seconds_until_due() == 5
    clock.advance(3)
    assert a.seconds_until_due() == 2


class CountedLeases:
    """The cluster's Lease store, its reads and writes counted."""

    def __init__(self, inner: LeaseStore) -> None:
        self._inner = inner
        self.reads = 0
        self.writes = 0

    def get(self, namespace: str, name: str) -> Lease:
        self.reads += 1
        return self._inner.get(namespace, name)

    def replace(self, lease: Lease) -> Lease:
        self.writes += 1
        return self._inner.replace(lease)

    def create(self, lease: Lease) -> Lease:
        self.writes += 1
        return self._inner.create(lease)


def test_a_renewal_is_one_write_and_no_read() -> None:
    clock = FakeClock()
    leases = CountedLeases(InMemoryCluster(clock=clock).leases)
    a = LeaderElector(leases, clock, namespace=NS, identity="a")
    assert a.ensure()
    leases.reads = leases.writes = 0
    for _ in range(12):  # a minute
        clock.advance(5)
        assert a.ensure()
    assert (leases.reads, leases.writes) == (0, 12)


def test_a_renewal_that_meets_its_own_earlier_write_reads_the_lease_and_keeps_leading() -> None:
    clock, cluster, a, _ = _pair()
    a.ensure()
    lease = cluster.leases.get(NS, DEFAULT_LEASE_NAME)
    cluster.leases.replace(dataclasses.replace(lease, renewed_at=clock.now()))  # a lost answer
    clock.advance(5)
    assert a.ensure()
    assert cluster.leases.get(NS, DEFAULT_LEASE_NAME).holder == "a"


def test_a_candidate_reads_the_lease_once_per_lease_and_renew_interval() -> None:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)
    a = LeaderElector(cluster.leases, clock, namespace=NS, identity="a")
    leases = CountedLeases(cluster.leases)
    b = LeaderElector(leases, clock, namespace=NS, identity="b")
    for _ in range(60):  # a minute, looked at every second
        assert a.ensure()
        assert not b.ensure()
        clock.advance(1)
    assert (leases.reads, leases.writes) == (3, 0)
