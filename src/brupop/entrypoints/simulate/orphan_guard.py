"""Start a command that dies with the simulation: `python -m ...orphan_guard CMD ARGS...`.

It asks Linux to SIGKILL this process when its parent goes (PR_SET_PDEATHSIG), then execs the
command, which keeps that request. So even a simulation killed with SIGKILL leaves no agent
behind. On other systems it simply execs the command.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m brupop.entrypoints.simulate.orphan_guard CMD [ARGS...]")
        return 2
    expected_parent = int(os.environ.pop("BRUPOP_SIM_PARENT_PID", "0"))
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if expected_parent and os.getppid() != expected_parent:
            return 1  # the simulation is already gone
    os.execv(argv[0], argv)
    return 1  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
