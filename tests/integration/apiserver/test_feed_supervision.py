"""The apiserver's shared shadow watch under a watch that raises something unexpected: the
feed is restarted (long-polls are woken again once it works), and /readyz answers 503 while it
keeps failing and 200 once it works again."""

from __future__ import annotations

import asyncio
import ssl
import urllib.error
import urllib.request
from pathlib import Path

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import ShadowSpec
from brupop.domain.states import UpdateState
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.runtime.supervisor import RestartSchedule
from tests.fakes.breakable_watch import with_breakable_shadows
from tests.integration.apiserver.conftest import FAST_DRAINS, NS, add_agent_nodes, start_rig
from tests.support.polling import wait_until
from tests.support.tls import make_certificates

QUICK = RestartSchedule(first_seconds=0.01, cap_seconds=0.05, failing_after=3, healthy_after=0.3)


async def test_a_feed_whose_watch_raises_is_restarted_and_wakes_waiters_once_it_works() -> None:
    cluster = InMemoryCluster(NS)
    shadows = with_breakable_shadows(cluster)
    cluster.add_node("n1", uid="uid-n1")
    created = cluster.shadows.create("n1", "uid-n1")
    feed = ShadowFeed(cluster.shadows, watch_seconds=0.2, restart=QUICK)
    feed.start()
    try:
        await asyncio.to_thread(wait_until, lambda: shadows.watch_calls >= 4)
        assert feed.failing
        shadows.broken.clear()
        await asyncio.to_thread(wait_until, lambda: not feed.failing)
        waiting = asyncio.create_task(feed.wait_for_change("brs-n1", created.resource_version, 30))
        spec = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.2.0")
        moved = await asyncio.to_thread(cluster.shadows.replace_spec, "brs-n1", spec, None)
        answer = await asyncio.wait_for(waiting, 20)
        assert answer is not None and answer.shadow is not None
        assert answer.shadow.resource_version == moved.resource_version
    finally:
        feed.stop()


def test_readyz_answers_503_while_the_shadow_watch_keeps_failing_and_200_after(
    tmp_path: Path,
) -> None:
    cluster = InMemoryCluster(NS)
    shadows = with_breakable_shadows(cluster)
    add_agent_nodes(cluster)
    certs = make_certificates(tmp_path)
    options = ApiserverOptions(
        namespace=NS, drain=FAST_DRAINS, feed_watch_seconds=0.5, feed_restart=QUICK
    )
    rig = start_rig(certs, cluster, options)
    context = ssl.create_default_context(cafile=str(certs.ca_path))

    def readyz() -> tuple[int, bytes]:
        url = rig.server.base_url + "/readyz"
        try:
            with urllib.request.urlopen(url, context=context, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    try:
        wait_until(lambda: shadows.watch_calls >= 4)
        assert readyz() == (503, b"not ready: the shadow watch keeps failing\n")
        shadows.broken.clear()
        wait_until(lambda: readyz()[0] == 200)
        assert readyz() == (200, b"ok\n")
    finally:
        rig.stop()
