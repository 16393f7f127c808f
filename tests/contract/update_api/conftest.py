"""One UpdateApi suite, two hosts: the in-memory fake and the real adapter over the emulator."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import pytest

from brupop.hostsim.host_kinds import VARIANTS
from brupop.ports.agent.update_api import UpdateApi
from tests.contract.update_api.emulated_host import EmulatedHost
from tests.fakes.update_api import FakeUpdateApi

# Host-side failure switches, by command, for each implementation.
_FAKE_FAILING = {"refresh": "refresh_updates", "prepare": "prepare_update"}
_EMULATOR_FAILING = {
    "refresh": "BRUPOP_SIM_FAULT_REFRESH_FAILS",
    "prepare": "BRUPOP_SIM_FAULT_PREPARE_FAILS",
}


class HostUnderTest(Protocol):
    """An UpdateApi plus the two things a test does to the host behind it."""

    api: UpdateApi

    def offer(self, version: str | None) -> None: ...

    def make_fail(self, command: str) -> None: ...


class FakeHost:
    """FakeUpdateApi as a HostUnderTest."""

    def __init__(self, current: str, offered: str | None, kind: str = "updatable") -> None:
        self.fake = FakeUpdateApi(current, offered, kind=kind, variant=VARIANTS[kind])
        self.api: UpdateApi = self.fake

    def offer(self, version: str | None) -> None:
        self.fake.offer(version)

    def make_fail(self, command: str) -> None:
        self.fake.failing_commands.add(_FAKE_FAILING[command])


class AdapterOverEmulator:
    """ApiclientUpdateApi running the host emulator as its apiclient."""

    def __init__(
        self, root: Path, current: str, offered: str | None, kind: str = "updatable"
    ) -> None:
        self.host = EmulatedHost(root, current=current, offered=offered)
        self.host.set_env(BRUPOP_SIM_HOST_KIND=kind)
        self.api: UpdateApi = self.host.adapter()

    def offer(self, version: str | None) -> None:
        self.host.offer(version)

    def make_fail(self, command: str) -> None:
        self.host.set_env(**{_EMULATOR_FAILING[command]: "1"})


MakeHost = Callable[..., HostUnderTest]


@pytest.fixture(params=["fake", "apiclient+emulator"])
def make_host(request: pytest.FixtureRequest, tmp_path: Path) -> MakeHost:
    """Build a host running `current`, offered `offered`, for each implementation."""

    def make(
        current: str = "1.0.0", offered: str | None = None, kind: str = "updatable"
    ) -> HostUnderTest:
        if request.param == "fake":
            return FakeHost(current, offered, kind)
        return AdapterOverEmulator(tmp_path, current, offered, kind)

    return make
