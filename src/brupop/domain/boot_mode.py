"""BootMode: whether the host booted in FIPS mode, read from its FIPS report.

FIPS is a boot mode of the same Bottlerocket image, and an update must keep it: a FIPS node
that comes back from its update in the standard mode runs cryptography its owner did not
choose. The agent reads the mode at start and after each reboot (`GET /report/fips`, the
route behind `apiclient report fips`); a node whose mode changed is failed and never started
again until it boots in its former mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

FIPS_ENABLED_CHECK = "fips01000000"
"""The report's check that `/proc/sys/crypto/fips_enabled` is 1 (the kernel booted in FIPS)."""
_PASSED, _FAILED = "PASS", "FAIL"


class BootMode(StrEnum):
    """The two boot modes an update must keep (stable codes, in the shadow's status)."""

    FIPS = "fips"
    STANDARD = "standard"


def read_fips_report(document: Any) -> BootMode | None:
    """The mode a FIPS report (its JSON form) shows; None when it shows none (not a report,
    no FIPS-enabled check, or a check skipped)."""
    results = document.get("results") if isinstance(document, Mapping) else None
    check = results.get(FIPS_ENABLED_CHECK) if isinstance(results, Mapping) else None
    status = check.get("status") if isinstance(check, Mapping) else None
    if status == _PASSED:
        return BootMode.FIPS
    if status == _FAILED:
        return BootMode.STANDARD
    return None


def changed_from(
    now: BootMode | None, before: BootMode | None, recorded: BootMode | None
) -> BootMode | None:
    """The mode the host ran before it changed, while it runs another; None otherwise.

    `before`: the mode last reported; `recorded`: a change already reported, which stays until
    the host boots in that mode again. A host that cannot show its mode any more (`now` None)
    after it showed one has changed, as far as anyone can tell: the check fails closed.
    """
    former = recorded or before
    if former is None or now is former:
        return None
    return former


def describe_change(now: BootMode | None, former: BootMode) -> str:
    """One sentence for REASON and the agent's log."""
    seen = "an unknown mode" if now is None else f"{now} mode"
    return f"the host booted in {seen} after its update; it ran in {former} mode before"
