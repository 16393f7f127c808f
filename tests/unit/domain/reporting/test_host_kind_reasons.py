"""Hosts that cannot take an update: each has its own REASON, and none is ever started."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from brupop.domain.host_kind import HostKind
from brupop.domain.reason import Reason
from brupop.domain.reporting.variant_offers import VariantOffers
from brupop.domain.reporting.waiting_reason import RolloutView, report
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules, is_ready_to_start
from brupop.domain.rollout.variant_versions import VariantVersions
from brupop.domain.shadow import Shadow
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, shadow

VIEW = RolloutView(
    now=NOW,
    rollout_rules=RolloutRules(ConcurrencyLimit(1)),
    window=MaintenanceWindow.starting("* * * * * * *", now=NOW),
    window_open=True,
)
HOUR = timedelta(hours=1)


def _host(
    node: str, kind: HostKind, *, variant: str = "aws-k8s-1.30", target: str = NEW, note: str = ""
) -> Shadow:
    made = shadow(node, target=target)
    assert made.status is not None
    status = made.status.model_copy(
        update={"host_kind": kind, "variant": variant, "host_note": note or None}
    )
    return made.model_copy(update={"status": status})


def _newest(shadows: list[Shadow]) -> dict[str, str]:
    """The newest version per variant, as the controller's book keeps it."""
    versions = VariantVersions()
    for one in shadows:
        versions.add(one)
    return versions.newest()


def _reason(node: Shadow, view: RolloutView = VIEW) -> tuple[Reason, str]:
    (row,) = report([node], view)
    return row.reason, row.detail


def test_a_variant_without_in_place_updates_has_its_own_reason_and_is_never_started() -> None:
    node = _host("n", HostKind.NO_IN_PLACE_UPDATES, variant="aws-dev", note="no settings.updates")

    reason, detail = _reason(node)

    assert reason is Reason.NO_IN_PLACE_UPDATES
    assert detail == "variant aws-dev has no in-place updates (no settings.updates); not started"
    assert not is_ready_to_start(node, NOW)  # even with another version in its status


def test_an_unexpected_answer_has_its_own_reason_naming_the_status_code() -> None:
    node = _host("n", HostKind.UNEXPECTED_ANSWER, note="settings answered 502")

    reason, detail = _reason(node)

    assert reason is Reason.UNEXPECTED_HOST_ANSWER
    assert "settings answered 502" in detail
    assert not is_ready_to_start(node, NOW)


def test_a_locked_down_host_offered_an_update_is_started_like_any_other() -> None:
    node = _host("n", HostKind.LOCKED_DOWN)

    assert _reason(node)[0] is Reason.READY
    assert is_ready_to_start(node, NOW)


def test_a_variant_offered_nothing_while_others_are_is_named_after_the_grace_period() -> None:
    peer = _host("peer", HostKind.UPDATABLE, variant="aws-k8s-1.30", target=NEW)
    old = _host("old", HostKind.UPDATABLE, variant="aws-k8s-1.29", target=OLD)

    offers = VariantOffers().after(_newest([peer, old]), NOW)
    assert offers.left_behind(NOW + HOUR, grace=2 * HOUR) == {}
    behind = offers.after(_newest([peer, old]), NOW + 2 * HOUR).left_behind(
        NOW + 2 * HOUR, 2 * HOUR
    )

    assert list(behind) == ["aws-k8s-1.29"]
    view = replace(VIEW, variants_behind=behind)
    reason, detail = _reason(old, view)
    assert reason is Reason.NO_OFFER_FOR_VARIANT
    assert f"offered {NEW}" in detail


def test_a_variant_that_catches_up_is_no_longer_behind() -> None:
    peer = _host("peer", HostKind.UPDATABLE, variant="aws-k8s-1.30", target=NEW)
    old = _host("old", HostKind.UPDATABLE, variant="aws-k8s-1.29", target=OLD)
    offered = _host("old", HostKind.UPDATABLE, variant="aws-k8s-1.29", target=NEW)

    offers = (
        VariantOffers().after(_newest([peer, old]), NOW).after(_newest([peer, offered]), NOW + HOUR)
    )

    assert offers.left_behind(NOW + 9 * HOUR, HOUR) == {}


def test_nodes_without_a_variant_are_never_said_to_be_behind() -> None:
    assert (
        VariantOffers().after(_newest([shadow("a"), shadow("b", target=OLD)]), NOW).behind_since
        == {}
    )
