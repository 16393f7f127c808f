"""LeaseStore behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from brupop.domain.cluster.objects import Lease
from brupop.ports.errors import AlreadyExistsError, ConflictError, NotFoundError
from tests.contract.cluster.conftest import NAMESPACE, Ports

ACQUIRED = datetime(2026, 1, 5, 10, 0, 0, 250000, tzinfo=UTC)
LEASE = Lease(
    name="brupop-controller",
    namespace=NAMESPACE,
    holder="controller-7d9f-abcde",
    duration_seconds=15,
    acquired_at=ACQUIRED,
    renewed_at=ACQUIRED,
    transitions=0,
)


def test_missing_lease_is_not_found(cluster: Ports) -> None:
    with pytest.raises(NotFoundError):
        cluster.leases.get(NAMESPACE, "brupop-controller")


def test_created_lease_reads_back_the_same(cluster: Ports) -> None:
    created = cluster.leases.create(LEASE)

    assert created.resource_version
    assert created == dataclasses.replace(LEASE, resource_version=created.resource_version)
    assert cluster.leases.get(NAMESPACE, "brupop-controller") == created


def test_second_candidate_creating_the_lease_gets_already_exists(cluster: Ports) -> None:
    cluster.leases.create(LEASE)
    with pytest.raises(AlreadyExistsError):
        cluster.leases.create(dataclasses.replace(LEASE, holder="controller-other"))


def test_renewal_from_the_current_version_lands(cluster: Ports) -> None:
    created = cluster.leases.create(LEASE)
    renewed_at = datetime(2026, 1, 5, 10, 0, 5, 1, tzinfo=UTC)

    renewed = cluster.leases.replace(dataclasses.replace(created, renewed_at=renewed_at))

    assert renewed.renewed_at == renewed_at
    assert renewed.resource_version != created.resource_version


def test_takeover_from_a_stale_version_is_a_conflict(cluster: Ports) -> None:
    created = cluster.leases.create(LEASE)
    cluster.leases.replace(dataclasses.replace(created, renewed_at=datetime.now(UTC)))

    with pytest.raises(ConflictError):
        cluster.leases.replace(
            dataclasses.replace(created, holder="controller-other", transitions=1)
        )

    assert cluster.leases.get(NAMESPACE, "brupop-controller").holder == LEASE.holder


def test_released_lease_has_no_holder(cluster: Ports) -> None:
    created = cluster.leases.create(LEASE)

    released = cluster.leases.replace(dataclasses.replace(created, holder=None))

    assert released.holder is None
    assert cluster.leases.get(NAMESPACE, "brupop-controller").holder is None
