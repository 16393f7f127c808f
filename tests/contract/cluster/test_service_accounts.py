"""The ServiceAccountSource port, the same for the in-memory cluster and for Kubernetes over
HTTP: brupop's namespace's accounts listed with their UIDs, watched (a deletion and a
re-creation under the same name, with a new UID, are seen), and read by name."""

from __future__ import annotations

import pytest

from brupop.domain.cluster.objects import WatchEventType
from brupop.ports.errors import NotFoundError
from tests.contract.cluster.conftest import NAMESPACE, PATIENT, Backend, Ports, changes


def test_the_namespaces_accounts_are_listed_with_their_uids(
    backend: Backend, cluster: Ports
) -> None:
    agent = backend.add_service_account(NAMESPACE, "agent")
    backend.add_service_account("elsewhere", "agent")

    listing = cluster.service_accounts.list()

    assert [(a.name, a.uid) for a in listing.items] == [("agent", agent.uid)]
    assert listing.resource_version


def test_a_deleted_account_and_its_recreation_under_the_same_name_are_watched(
    backend: Backend, cluster: Ports
) -> None:
    old = backend.add_service_account(NAMESPACE, "agent")
    since = cluster.service_accounts.list().resource_version

    backend.remove_service_account(NAMESPACE, "agent")
    new = backend.add_service_account(NAMESPACE, "agent")
    seen = changes(cluster.service_accounts.watch(since, PATIENT), 2)

    assert [(e.type, e.object.uid) for e in seen] == [
        (WatchEventType.DELETED, old.uid),
        (WatchEventType.ADDED, new.uid),
    ]
    assert new.uid != old.uid


def test_an_account_is_read_by_name_and_a_missing_one_is_not_found(
    backend: Backend, cluster: Ports
) -> None:
    agent = backend.add_service_account(NAMESPACE, "agent")

    assert cluster.service_accounts.get("agent").uid == agent.uid
    with pytest.raises(NotFoundError):
        cluster.service_accounts.get("someone-else")
