"""UpdateApi: the Bottlerocket host's update API, as the agent needs it.

Commands return once the host has finished them (the host works in the background under a
lock); they raise a `HostApiError` subclass otherwise.
"""

from __future__ import annotations

from typing import Protocol

from brupop.domain.boot_mode import BootMode
from brupop.domain.host.host import HostUpdateStatus, OsInfo
from brupop.domain.host_kind import HostClass


class UpdateApi(Protocol):
    """The host's `/os`, `/updates/status` and `/actions/*` endpoints."""

    def os_info(self) -> OsInfo:
        """`GET /os`: what the host runs now."""
        ...

    def host_class(self) -> HostClass:
        """What kind of host this is, from one read of `settings.updates` (the only settings
        read the agent makes; a locked-down host refuses it)."""
        ...

    def boot_mode(self) -> BootMode | None:
        """`GET /report/fips` (as `apiclient report fips`): FIPS or standard; None when the host
        has no FIPS report (an older release) or the report shows no mode."""
        ...

    def update_status(self) -> HostUpdateStatus | None:
        """`GET /updates/status`; None while the host has no status yet (404 after a boot)."""
        ...

    def refresh_updates(self) -> HostUpdateStatus:
        """Ask the host to look for updates, wait until it has, and return its status."""
        ...

    def prepare_update(self) -> HostUpdateStatus:
        """Download the chosen update into the inactive partition; wait; return the status."""
        ...

    def activate_update(self) -> HostUpdateStatus:
        """Mark the prepared partition to boot next; wait; return the status."""
        ...

    def deactivate_update(self) -> HostUpdateStatus:
        """Undo an activation (Ready -> Staged); wait; return the status."""
        ...

    def reboot(self) -> None:
        """Ask the host to reboot. Raises HostCommandKilledError when the reboot kills apiclient."""
        ...
