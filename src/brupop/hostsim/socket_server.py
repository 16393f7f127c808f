"""`brupop-host-emulator serve --socket PATH [--reboot-command ...]`: the emulated host's API
over HTTP on a unix socket, as Bottlerocket's API server listens on /run/api.sock.

Each request is answered by the same `EmulatedHost` the per-call emulator uses, so the state in
$BRUPOP_SIM_HOST_DIR is shared with it. `POST /actions/reboot` boots the next version and runs
the reboot command (a node's reboot: its containers are stopped) while the caller waits: like a
real shutdown, it kills the caller before an answer comes (a caller still there a minute later
gets its 204). Without a command it answers 204 at once.
"""

from __future__ import annotations

import os
import socket
import socketserver
import struct
import subprocess
import sys
from http.server import BaseHTTPRequestHandler

from brupop.hostsim.host import EmulatedHost, Response
from brupop.hostsim.settings import SimSettingError, SimSettings, load_settings
from brupop.hostsim.store import HostStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

USAGE = "Usage: brupop-host-emulator serve --socket PATH [--reboot-command COMMAND ARG...]\n"
REBOOT_SECONDS = 600.0
BODY_LIMIT = 64 * 1024
CALLER_PID = "BRUPOP_SIM_CALLER_PID"
CALLER_SECONDS = 60.0
PEER_CREDENTIALS = struct.calcsize("3i")


class ServeUsageError(ValueError):
    """The arguments are not `--socket PATH [--reboot-command ...]`."""


class HostApiServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """One thread per connection; the host and the reboot command are shared."""

    daemon_threads = True

    def __init__(self, path: str, host: EmulatedHost, reboot: Sequence[str]) -> None:
        self.host = host
        self.reboot_command = list(reboot)
        super().__init__(path, HostApiHandler)


class HostApiHandler(BaseHTTPRequestHandler):
    """GET and POST routed to the emulated host; every other method is 405."""

    server: HostApiServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # the name http.server dispatches to
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def do_PUT(self) -> None:
        self._answer("PUT")

    def _answer(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > BODY_LIMIT:
            self._send(Response(413, "request body too large"))
            return
        self.rfile.read(length)
        response = self.server.host.handle(method, self.path.split("?", 1)[0])
        if response.reboot and self.server.reboot_command:
            reboot(self.server.reboot_command, caller_pid(self.connection))
            if caller_gone(self.connection):
                self.close_connection = True
                return  # as on a real host: the caller died waiting for the answer
        self._send(response)

    def _send(self, response: Response) -> None:
        body = response.body.encode()
        self.send_response(response.status)
        self.send_header("Content-Length", str(len(body)))
        if response.status == 200:
            self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the host's own log (host.log) records what the requests did."""


def caller_pid(connection: socket.socket) -> int:
    """The pid of the process at the other end of the socket (SO_PEERCRED)."""
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER_CREDENTIALS)
    return int(struct.unpack("3i", credentials)[0])


def caller_gone(connection: socket.socket) -> bool:
    """Wait (bounded) for the caller to close its end, as a caller the reboot killed does;
    False if it still waits for its answer after CALLER_SECONDS."""
    connection.settimeout(CALLER_SECONDS)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def reboot(command: Sequence[str], caller: int) -> None:
    """Run the node's reboot to its end, in a session of its own, so that it outlives the
    caller it kills; the caller's pid is in $BRUPOP_SIM_CALLER_PID."""
    env = {**os.environ, CALLER_PID: str(caller)}
    try:
        subprocess.run(
            list(command), env=env, start_new_session=True, timeout=REBOOT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        sys.stderr.write(f"brupop-host-emulator serve: the reboot command failed: {error}\n")


def parse_serve_args(argv: Sequence[str]) -> tuple[str, list[str]]:
    """(socket path, reboot command) from `--socket PATH [--reboot-command ...]`."""
    args = list(argv)
    if len(args) < 2 or args[0] != "--socket":
        raise ServeUsageError("Missing required argument '--socket PATH'")
    path, rest = args[1], args[2:]
    if rest and rest[0] != "--reboot-command":
        raise ServeUsageError(f"Unknown argument '{rest[0]}'")
    if rest == ["--reboot-command"]:
        raise ServeUsageError("Did not give a command to --reboot-command")
    return path, rest[1:]


def serve_main(argv: Sequence[str]) -> int:
    """Serve until killed; 2 on bad arguments or settings."""
    try:
        path, command = parse_serve_args(argv)
        settings = load_settings()
    except (ServeUsageError, SimSettingError) as error:
        sys.stderr.write(f"brupop-host-emulator serve: {error}\n\n{USAGE}")
        return 2
    if os.path.exists(path):
        os.unlink(path)
    with HostApiServer(path, host_of(settings), command) as server:
        server.serve_forever()
    return 0


def host_of(settings: SimSettings) -> EmulatedHost:
    store = HostStore(
        settings.host_dir,
        node_name=settings.node_name,
        seed_version=settings.current_version,
        seed_offer=settings.target_version,
    )
    return EmulatedHost(settings, store)
