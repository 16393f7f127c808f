"""A connection's TLS protocol keeps its attributes in the keys its instances share.

CPython shares one table of attribute names between the instances of a class while each
instance's dict holds at most 30; past that each instance's dict takes a table of its own, about
1.3 KiB more for every open connection. asyncio's protocol sets 34, so some go to slots."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Iterator

import pytest

from brupop.adapters.apiserver_http.serving.admission import ReadBuffer, _Tls

SHARED_KEYS_MAX = 30  # CPython's bound on the keys a class's instances share


class _Socket(asyncio.Transport):
    """The socket transport under the TLS protocol: it takes what it is asked and reads on."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return default

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        return

    def is_reading(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> None:
        return


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def test_a_connected_tls_protocol_keeps_its_dict_within_the_shared_keys(
    loop: asyncio.AbstractEventLoop,
) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls = _Tls(loop, asyncio.Protocol(), context, loop.create_future(), server_side=True)
    tls.share(ReadBuffer())
    tls.connection_made(_Socket())
    keys = len(vars(tls))
    tls.connection_lost(None)

    assert keys <= SHARED_KEYS_MAX
    assert tls.handshaken is False and tls.slot is None  # its own attributes, in slots
