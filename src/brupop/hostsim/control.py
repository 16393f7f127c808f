"""Changes made to an emulated host from outside: what an update repository or a test would do.

For simulations and tests (never called by the emulated apiclient itself): seed a host before
its agent starts, offer a new version, and read back what the host did (version, reboots).
"""

from __future__ import annotations

import os

from brupop.hostsim.settings import DEFAULT_CURRENT_VERSION
from brupop.hostsim.store import STATE_FILE, HostStore
from brupop.hostsim.versions import is_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def seed_host(
    host_dir: str,
    *,
    node_name: str,
    current_version: str = DEFAULT_CURRENT_VERSION,
    offered_version: str | None = None,
) -> None:
    """Create the host's state (no-op if it exists): running `current_version`, offered one."""
    for version in (current_version, offered_version):
        if version is not None and not is_version(version):
            raise ValueError(f"not a semantic version: {version!r}")
    store = HostStore(
        host_dir, node_name=node_name, seed_version=current_version, seed_offer=offered_version
    )
    with store.transaction():
        pass


def offer_version(host_dir: str, version: str | None) -> None:
    """Make the host's update repository offer `version` (None: nothing); seen at next refresh."""
    if version is not None and not is_version(version):
        raise ValueError(f"not a semantic version: {version!r}")
    with _existing(host_dir).transaction() as state:
        state.offered_version = version


def read_host(host_dir: str) -> dict[str, Any]:
    """The host as a simulation reports it: version, offer, reboots, update state."""
    state = _existing(host_dir).read()
    status = state.update_status
    return {
        "node_name": state.node_name,
        "version_id": state.version_id,
        "offered_version": state.offered_version,
        "reboots": state.reboots,
        "update_state": status["update_state"] if status else None,
    }


def _existing(host_dir: str) -> HostStore:
    if not os.path.isfile(os.path.join(host_dir, STATE_FILE)):
        raise FileNotFoundError(f"no emulated host state in {host_dir}")
    return HostStore(host_dir, node_name="", seed_version=DEFAULT_CURRENT_VERSION, seed_offer=None)
