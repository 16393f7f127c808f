"""Connecting by an ASCII host name never loads the IDNA codec (about 13 ms of the agent's start,
100 where bytecode cannot be written); a name that needs it still goes through it."""

from __future__ import annotations

import subprocess
import sys

from brupop.adapters.apiserver_client.connections import resolver_name

# A fresh interpreter asks a closed loopback port by name, as the agent asks its apiserver.
PROBE = """\
import socket, sys
from pathlib import Path
from brupop.adapters.apiserver_client.connections import ApiserverConnections
with socket.socket() as closed:
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
connections = ApiserverConnections(f"http://localhost:{port}", Path("unused"))
try:
    connections.exchange("GET", "/", headers={}, body=None, connect_seconds=5, read_seconds=5,
                         max_bytes=10)
except OSError:
    pass
print("encodings.idna" in sys.modules, "stringprep" in sys.modules)
"""


def test_reaching_the_apiserver_by_an_ascii_name_loads_no_idna_codec() -> None:
    answer = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )

    assert answer.stdout.split() == ["False", "False"]


def test_an_ascii_name_goes_as_bytes_and_an_international_one_as_text() -> None:
    assert resolver_name("brupop-apiserver.ns.svc.cluster.local") == (
        b"brupop-apiserver.ns.svc.cluster.local"
    )
    assert resolver_name("127.0.0.1") == b"127.0.0.1"
    assert resolver_name("bücher.example") == "bücher.example"
