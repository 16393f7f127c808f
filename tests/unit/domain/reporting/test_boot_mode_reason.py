"""A node whose update changed its boot mode (FIPS or not) has its own REASON and is never
started again; a node that kept its mode is started as any other."""

from __future__ import annotations

from brupop.domain.boot_mode import BootMode
from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import RolloutView, report
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules, is_ready_to_start
from brupop.domain.shadow import Shadow
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from tests.unit.domain.controller_shadows import NEW, NOW, shadow

VIEW = RolloutView(
    now=NOW,
    rollout_rules=RolloutRules(ConcurrencyLimit(1)),
    window=MaintenanceWindow.starting("* * * * * * *", now=NOW),
    window_open=True,
)


def _booted(mode: BootMode, changed_from: BootMode | None) -> Shadow:
    made = shadow("n", target=NEW)
    assert made.status is not None
    status = made.status.model_copy(
        update={"boot_mode": mode, "boot_mode_changed_from": changed_from}
    )
    return made.model_copy(update={"status": status})


def test_a_node_whose_update_lost_fips_has_its_own_reason_and_is_never_started() -> None:
    node = _booted(BootMode.STANDARD, BootMode.FIPS)

    (row,) = report([node], VIEW)

    assert row.reason is Reason.BOOT_MODE_CHANGED
    assert "standard mode after its update; it ran in fips mode before" in row.detail
    assert not is_ready_to_start(node, NOW)  # even with another version in its status


def test_a_fips_node_that_kept_its_mode_is_started_as_any_other() -> None:
    node = _booted(BootMode.FIPS, None)

    assert is_ready_to_start(node, NOW)
    assert report([node], VIEW)[0].reason is Reason.READY
