"""`brupop-host-emulator raw -u URI [-m METHOD]`: a stand-in for Bottlerocket's `apiclient`.

Prints what `apiclient raw` prints: the response body on stdout (exit 0), or on an HTTP error
`Failed <M> request to '<uri>': Status <code> when <M>ing <uri>: <body>` on stderr (exit 1);
usage errors exit 2. `POST /actions/reboot` ends by SIGTERM to the caller and to itself, as a
host shutdown stops the agent's container.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from brupop.hostsim import faults as fault_kinds
from brupop.hostsim.host import LOCK_HELD, SHARED_LOCK_BUSY, EmulatedHost, Response
from brupop.hostsim.settings import SimSettingError, SimSettings, load_settings
from brupop.hostsim.store import HostStore

TYPE_CHECKING = False  # keep `typing` out of the emulator's start-up
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import BinaryIO

PROGRAM = "brupop-host-emulator"
USAGE = f"""Usage: {PROGRAM} raw -u URI [-m METHOD]
       {PROGRAM} serve --socket PATH [--reboot-command COMMAND ARG...]

Emulates `apiclient raw` against a simulated Bottlerocket host whose state lives in
$BRUPOP_SIM_HOST_DIR.

raw options:
    -u, --uri URI              Required; URI to request from the server, e.g. /os
    -m, -X, --method METHOD    HTTP method to use in request.  Default: GET
"""
GARBAGE_STDOUT = b'{"update_state": \xff\xfe\x00<<garbage from the emulated host>>\n'
GARBAGE_STDERR = b"Status \xff\xfe\x00 panicked: <<garbage from the emulated host>>\n"


class UsageError(ValueError):
    """The arguments are not `raw -u URI [-m METHOD]`."""


def parse_args(argv: list[str]) -> tuple[str, str]:
    """(method, uri) from apiclient-style arguments; `raw` may be omitted, as in apiclient."""
    args = argv[1:] if argv[:1] == ["raw"] else list(argv)
    method, uri = "GET", None
    items = iter(args)
    for arg in items:
        if arg in ("-m", "-X", "--method"):
            method = _value(items, "-m | --method")
        elif arg in ("-u", "--uri"):
            uri = _value(items, "-u | --uri")
        else:
            raise UsageError(f"Unknown argument '{arg}'")
    if uri is None:
        raise UsageError("Missing required argument '--uri'")
    return method, uri


def _value(items: Iterator[str], flag: str) -> str:
    value = next(items, None)
    if value is None:
        raise UsageError(f"Did not give argument to {flag}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Run one emulated apiclient call; returns the exit code (unless a reboot ends us first).
    `serve` runs the host's API on a unix socket instead (socket_server)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["serve"]:
        from brupop.hostsim.socket_server import serve_main

        return serve_main(args[1:])
    try:
        method, uri = parse_args(args)
    except UsageError as error:
        sys.stderr.write(f"{error}\n\n{USAGE}")
        return 2
    try:
        settings = load_settings()
    except SimSettingError as error:
        sys.stderr.write(f"{PROGRAM}: {error}\n")
        return 2
    store = HostStore(
        settings.host_dir,
        node_name=settings.node_name,
        seed_version=settings.current_version,
        seed_offer=settings.target_version,
    )
    path = uri.split("?", 1)[0]
    if settings.first_answer_delay > 0 and store.first_call():
        store.log("host.late", seconds=settings.first_answer_delay, method=method, uri=uri)
        time.sleep(settings.first_answer_delay)
    fault = fault_kinds.call_fault(settings.faults, store, path)
    if fault is not None:
        store.log("fault.injected", fault=fault, method=method, uri=uri)
    if fault == fault_kinds.HANG:
        time.sleep(settings.faults.hang_seconds)
    elif fault is not None:
        return _faulty_answer(fault, method, uri, settings)
    response = EmulatedHost(settings, store).handle(method, path)
    code = _answer(response, method, uri)
    if response.reboot:
        _shut_down(settings.reboot_kills)
    return code


def _answer(response: Response, method: str, uri: str) -> int:
    if 200 <= response.status < 300:
        if response.body:
            _write(sys.stdout.buffer, (response.body + "\n").encode())
        return 0
    _write(
        sys.stderr.buffer,
        (
            f"Failed {method} request to '{uri}': "
            f"Status {response.status} when {method}ing {uri}: {response.body}\n"
        ).encode(),
    )
    return 1


def _faulty_answer(fault: str, method: str, uri: str, settings: SimSettings) -> int:
    if fault == fault_kinds.SOCKET_DOWN:
        _write(
            sys.stderr.buffer,
            f"Failed {method} request to '{uri}': Failed to send request: error trying to "
            "connect: No such file or directory (os error 2)\n".encode(),
        )
        return 1
    if fault == fault_kinds.SILENT_EXIT:
        return settings.faults.silent_exit_code
    if fault == fault_kinds.GARBAGE_STDERR:
        _write(sys.stderr.buffer, GARBAGE_STDERR)
        return 1
    if fault == fault_kinds.GARBAGE_STDOUT:
        _write(sys.stdout.buffer, GARBAGE_STDOUT)
        return 0
    body = SHARED_LOCK_BUSY if method == "GET" else LOCK_HELD
    return _answer(Response(423, body), method, uri)


def _write(stream: BinaryIO, data: bytes) -> None:
    try:
        stream.write(data)
        stream.flush()
    except BrokenPipeError:
        pass


def _shut_down(mode: str) -> None:
    """What a host shutdown does to the container: SIGTERM to the caller, then to us."""
    if mode == "none":
        return
    parent = os.getppid()
    if mode == "parent-and-self" and parent > 1:
        os.kill(parent, signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)  # the signal ends us before this returns


if __name__ == "__main__":
    sys.exit(main())
