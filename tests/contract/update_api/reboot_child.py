"""A stand-in agent process for reboot tests: the emulator SIGTERMs its caller on reboot, so the
adapter must run in a child of the test, never in the test process itself.

Usage: python -m tests.contract.update_api.reboot_child APICLIENT {plain|handler}
* plain: default SIGTERM disposition; the reboot ends this process by SIGTERM.
* handler: a SIGTERM handler that only records; reports what reboot() raised.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

from brupop.adapters.apiclient.update_api import ApiclientUpdateApi
from brupop.adapters.system.clock import SystemClock
from brupop.ports.errors import HostCommandKilledError

terminated: list[int] = []


def _record(signum: int, frame: FrameType | None) -> None:
    terminated.append(signum)


def main(apiclient: str, mode: str) -> int:
    if mode == "handler":
        signal.signal(signal.SIGTERM, _record)
    api = ApiclientUpdateApi(
        SystemClock(),
        apiclient_path=apiclient,
        rate_period_seconds=0.001,
        retry_base_seconds=0.01,
        retry_max_seconds=0.05,
        poll_interval_seconds=0.02,
        command_deadline_seconds=10,
    )
    api.refresh_updates()
    api.prepare_update()
    api.activate_update()
    print("ready", flush=True)
    try:
        api.reboot()
    except HostCommandKilledError as error:
        print(f"reboot killed apiclient with signal {error.signal}", flush=True)
    print(f"sigterm received: {terminated}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
