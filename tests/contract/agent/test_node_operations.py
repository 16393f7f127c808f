"""NodeOperations behaviour, the same for the agent's fake and for the HTTPS client."""

from __future__ import annotations

import pytest

from brupop.ports.errors import DrainFailedError
from tests.contract.agent.conftest import AgentSide


def test_cordon_and_drain_closes_the_node_and_evicts_its_workloads(side: AgentSide) -> None:
    side.add_workload("web-a")
    side.add_workload("web-b")

    side.node.cordon_and_drain()

    assert side.unschedulable()
    assert side.workloads() == set()


def test_cordon_and_drain_twice_is_the_same_as_once(side: AgentSide) -> None:
    side.add_workload("web-a")

    side.node.cordon_and_drain()
    side.node.cordon_and_drain()

    assert side.unschedulable()
    assert side.workloads() == set()


def test_uncordon_reopens_a_node_brupop_cordoned(side: AgentSide) -> None:
    side.node.cordon_and_drain()

    side.node.uncordon()
    side.node.uncordon()

    assert not side.unschedulable()


def test_uncordon_of_an_open_node_leaves_it_open(side: AgentSide) -> None:
    side.node.uncordon()

    assert not side.unschedulable()


def test_a_node_an_administrator_cordoned_stays_cordoned_after_the_update(
    side: AgentSide,
) -> None:
    side.cordon_as_administrator()

    side.node.cordon_and_drain()
    side.node.uncordon()

    assert side.unschedulable()


def test_a_workload_its_budget_holds_fails_the_drain_naming_it(side: AgentSide) -> None:
    side.add_workload("web-a")
    side.add_workload("db-0", protected=True)

    with pytest.raises(DrainFailedError) as failure:
        side.node.cordon_and_drain()

    assert failure.value.blockers == ("default/db-0",)
    assert side.workloads() == {"default/db-0"}
    assert side.unschedulable()


def test_load_balancer_exclusion_round_trip_is_idempotent(side: AgentSide) -> None:
    side.node.exclude_from_load_balancers()
    side.node.exclude_from_load_balancers()
    assert side.excluded_from_load_balancers()

    side.node.restore_to_load_balancers()
    side.node.restore_to_load_balancers()
    assert not side.excluded_from_load_balancers()


def test_an_exclusion_an_administrator_set_stays_after_the_update(side: AgentSide) -> None:
    side.exclude_as_administrator()

    side.node.exclude_from_load_balancers()
    side.node.restore_to_load_balancers()

    assert side.excluded_from_load_balancers()
