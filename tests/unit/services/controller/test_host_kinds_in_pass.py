"""A controller pass over hosts that cannot update: never started, each with its own REASON; a
variant offered nothing while others are is named once its grace period is over, in a pass
that finds its shadows unchanged."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.host_kind import HostKind
from brupop.domain.reason import Reason
from brupop.domain.shadow import ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from tests.unit.services.controller.fleet import NEW, OLD, Fleet, RecordingMetrics
from tests.unit.services.controller.passes import reasons_by_node, run_passes, started_shadows


def _report(fleet: Fleet, node: str, *, current: str, target: str, **host: object) -> None:
    status = ShadowStatus(
        current_version=current,
        target_version=target,
        current_state=UpdateState.IDLE,
        **host,
    )
    fleet.cluster.shadows.update_status(shadow_name(node), status)


def test_hosts_that_cannot_update_are_never_started_even_when_offered_a_version() -> None:
    fleet = Fleet(2)
    _report(fleet, "node-00", current=OLD, target=NEW, host_kind=HostKind.NO_IN_PLACE_UPDATES)
    _report(fleet, "node-01", current=OLD, target=NEW, host_kind=HostKind.UNEXPECTED_ANSWER)
    controller = fleet.controller(2)

    run_passes(fleet, controller, 5)

    assert started_shadows(fleet) == []
    assert reasons_by_node(controller) == {
        "node-00": Reason.NO_IN_PLACE_UPDATES,
        "node-01": Reason.UNEXPECTED_HOST_ANSWER,
    }
    assert all(s.status is not None and s.status.crash_count == 0 for s in fleet.shadows())


def test_a_variant_left_behind_is_named_once_its_grace_period_is_over() -> None:
    fleet = Fleet(2)
    updatable = {"host_kind": HostKind.UPDATABLE}
    _report(fleet, "node-00", current=NEW, target=NEW, variant="aws-k8s-1.33", **updatable)
    _report(fleet, "node-01", current=OLD, target=OLD, variant="aws-k8s-1.29", **updatable)
    metrics = RecordingMetrics()
    controller = fleet.controller(2, metrics=metrics)

    run_passes(fleet, controller, 3)
    assert reasons_by_node(controller)["node-01"] is Reason.NO_UPDATE
    assert metrics.waiting["no_offer_for_variant"] == 0

    fleet.clock.advance(timedelta(hours=6).total_seconds())
    run_passes(fleet, controller, 2)

    assert reasons_by_node(controller)["node-01"] is Reason.NO_OFFER_FOR_VARIANT
    # The metric's label moves too, though neither shadow changed.
    assert (metrics.waiting["no_offer_for_variant"], metrics.waiting["no_update"]) == (1, 1)
    assert reasons_by_node(controller)["node-00"] is Reason.NO_UPDATE
    assert started_shadows(fleet) == []
