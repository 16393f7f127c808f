"""An idle apiserver's event loop sleeps until something happens: no timer of the server wakes it
(uvicorn's own loop wakes it ten times a second), while answers stay dated and a stop asked from
another thread still ends the server."""

from __future__ import annotations

import asyncio
import ssl
import time
import urllib.request
from email.utils import parsedate_to_datetime

from tests.integration.apiserver.conftest import Rig
from tests.support.polling import wait_until


async def _timers_due_in_seconds() -> list[float]:
    """When each timer scheduled on the running loop is due, from now (asyncio's own list)."""
    loop = asyncio.get_running_loop()
    scheduled = getattr(loop, "_scheduled", [])
    return [handle.when() - loop.time() for handle in scheduled if not handle.cancelled()]


def _timers(rig: Rig) -> list[float]:
    loop = rig.server.server.loop  # type: ignore[attr-defined]
    return asyncio.run_coroutine_threadsafe(_timers_due_in_seconds(), loop).result(timeout=30)


def test_an_idle_server_keeps_no_timer_that_wakes_its_event_loop(rig: Rig) -> None:
    assert _timers(rig) == []


def test_an_answer_carries_the_date_it_was_sent_on(rig: Rig) -> None:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    with urllib.request.urlopen(f"{rig.server.base_url}/ping", context=context, timeout=30) as got:
        sent = parsedate_to_datetime(got.headers["Date"]).timestamp()
    assert abs(sent - time.time()) < 120  # today's date, to the second, not a fixed one


def test_a_stop_asked_from_another_thread_ends_the_idle_server(rig: Rig) -> None:
    rig.server.server.should_exit = True
    wait_until(lambda: not rig.server.thread.is_alive(), "the server thread ended", seconds=30)
