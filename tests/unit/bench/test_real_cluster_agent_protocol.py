"""The load generator's agent connection against a loopback server that closes kept-alive
connections the way uvicorn's idle timeout does."""

from __future__ import annotations

import asyncio

from tests.unit.bench.test_real_cluster_readings import bench_module

ANSWER = b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"ok": true}'


async def _closing_server(served: list[int], closed: asyncio.Event | None = None) -> asyncio.Server:
    """Answers one request per connection, then closes it (and sets `closed` once it is)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        served.append(1)
        writer.write(ANSWER)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        if closed is not None:
            closed.set()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def test_a_call_after_the_server_closed_the_kept_alive_connection_opens_a_fresh_one() -> None:
    protocol = bench_module("agent_protocol")

    async def two_calls() -> list[int]:
        served: list[int] = []
        closed = asyncio.Event()
        server = await _closing_server(served, closed)
        port = server.sockets[0].getsockname()[1]
        conn = protocol.AgentConnection("127.0.0.1", port, None, "node-a", "token")
        first = await conn.call("GET", "/ping")
        await asyncio.wait_for(closed.wait(), 20)  # the server has closed the connection
        second = await conn.call("GET", "/ping")
        conn.close()
        server.close()
        await server.wait_closed()
        return [first.status, second.status, len(served)]

    assert asyncio.run(two_calls()) == [200, 200, 2]


def test_a_request_lost_on_a_connection_closed_as_it_went_out_is_sent_again_once() -> None:
    protocol = bench_module("agent_protocol")

    async def call_on_a_dead_connection() -> list[int]:
        served: list[int] = []
        server = await _closing_server(served)
        port = server.sockets[0].getsockname()[1]
        conn = protocol.AgentConnection("127.0.0.1", port, None, "node-a", "token")
        await conn.call("GET", "/ping")
        conn._reusable = lambda: True  # the close has not been seen yet: the race
        answer = await conn.call("GET", "/ping")
        conn.close()
        server.close()
        await server.wait_closed()
        return [answer.status, len(served)]

    assert asyncio.run(call_on_a_dead_connection()) == [200, 2]


def test_each_generated_agent_calls_from_a_loopback_address_of_its_own() -> None:
    protocol = bench_module("agent_protocol")

    async def peer_of_one_call(source: str) -> str:
        peers: list[str] = []

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            peers.append(writer.get_extra_info("peername")[0])
            await reader.readuntil(b"\r\n\r\n")
            writer.write(ANSWER)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        conn = protocol.AgentConnection("127.0.0.1", port, None, "node-a", "token", source)
        await conn.call("GET", "/ping")
        conn.close()
        server.close()
        await server.wait_closed()
        return peers[0]

    load = bench_module("agent_load")
    addresses = [load.agent_address(index) for index in range(10_005)]
    assert len(set(addresses)) == len(addresses)
    assert asyncio.run(peer_of_one_call(addresses[9_999])) == addresses[9_999]


def test_generated_agents_pause_before_a_retry_as_the_agents_client_does() -> None:
    load = bench_module("agent_load")
    assert [load.retry_pause(attempt, lambda: 1.0) for attempt in (0, 3, 7, 40)] == [
        0.1,
        0.8,
        10.0,
        10.0,
    ]
    assert load.retry_pause(5, lambda: 0.25) == 0.8
