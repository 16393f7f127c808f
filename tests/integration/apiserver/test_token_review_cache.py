"""TokenReview caching over HTTPS: an agent's steady traffic costs one review per cache period,
a burst of one bad token costs one review, and a flood of bad tokens cannot slow agents down."""

from __future__ import annotations

import math
import secrets
import ssl
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.tokens import InMemoryTokenReviewer
from brupop.domain.cluster.objects import TokenIdentity
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import UnavailableError
from tests.integration.apiserver.conftest import (
    FAST_DRAINS,
    NS,
    Rig,
    RigFactory,
    add_agent_nodes,
    open_connections,
    start_rig,
)
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

RESOURCE = "/bottlerocket-node-resource"


def test_many_requests_from_one_agent_within_the_cache_time_cost_one_review(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(token_review_cache_seconds=300)
    agent = rig.client("n1")
    status = AgentShadowStatus(
        current_version="1.0.0", target_version="1.0.0", current_state=UpdateState.IDLE
    )
    before = rig.cluster.token_reviewer.review_count

    agent.create()
    agent.update_status(status)
    # Once the watch has seen it, the same report again is answered without a write, so the
    # node's pace of status writes (10 at once) does not refuse the reports below.
    wait_until(
        lambda: getattr(rig.feed.latest("brs-n1"), "status", None) is not None,
        "the watch to see the report",
    )
    for _ in range(24):
        agent.update_status(status)
        agent.get()

    # The node-uid lookup and every later call share the token's one review.
    assert rig.cluster.token_reviewer.review_count - before == 1


def test_without_a_cache_every_request_costs_a_review(make_rig: RigFactory) -> None:
    rig = make_rig(token_review_cache_seconds=0)
    agent = rig.client("n1")
    before = rig.cluster.token_reviewer.review_count

    for _ in range(5):
        agent.get()

    assert rig.cluster.token_reviewer.review_count - before == 6  # node-uid lookup + 5 reads


class SlowTokenReviewer(InMemoryTokenReviewer):
    """The in-memory TokenReview behind a slow kube-apiserver: each review takes
    `delay_seconds`, and none answers while `gate` is closed (it opens after 30 s regardless)."""

    def __init__(self, cluster: InMemoryCluster, delay_seconds: float) -> None:
        super().__init__(cluster.clock, cluster.pods.store, cluster.service_accounts.store)
        self.delay_seconds = delay_seconds
        self.gate = threading.Event()
        self.gate.set()
        self.in_review = 0
        self._count_lock = threading.Lock()

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        with self._count_lock:
            self.in_review += 1
        try:
            time.sleep(self.delay_seconds)
            self.gate.wait(30)
            return super().review(token, audiences)
        finally:
            with self._count_lock:
                self.in_review -= 1


@pytest.fixture
def slow_rig(certs: TestCertificates) -> Iterator[Callable[[float], tuple[Rig, SlowTokenReviewer]]]:
    """Rigs whose TokenReviews are slow; stopped after the test."""
    started: list[Rig] = []

    def make(delay_seconds: float) -> tuple[Rig, SlowTokenReviewer]:
        cluster = InMemoryCluster(NS)
        reviewer = SlowTokenReviewer(cluster, delay_seconds)
        cluster.token_reviewer = reviewer
        add_agent_nodes(cluster)
        options = ApiserverOptions(namespace=NS, drain=FAST_DRAINS, feed_watch_seconds=0.5)
        rig = start_rig(certs, cluster, options)
        started.append(rig)
        return rig, reviewer

    yield make
    for rig in started:
        rig.cluster.token_reviewer.gate.set()  # type: ignore[attr-defined]
        rig.stop()


def bogus_headers(token: str) -> dict[str, str]:
    return {"BrupopNodeName": "n1", "BrupopNodeUid": "uid-n1", "BrupopK8sAuthToken": token}


def call_with_bogus_token(
    rig: Rig, token: str, statuses: list[int], *, address: str, times: int = 1
) -> None:
    """GET the shadow `times` with `token`, from the loopback `address` (127.0.0.0/8)."""
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    transport = httpx.HTTPTransport(verify=context, local_address=address)
    with httpx.Client(transport=transport, timeout=60) as client:
        for _ in range(times):
            answer = client.get(rig.server.base_url + RESOURCE, headers=bogus_headers(token))
            statuses.append(answer.status_code)


def from_many_addresses(
    rig: Rig, tokens: Callable[[], str], statuses: list[int], callers: int, times: int = 1
) -> list[threading.Thread]:
    """`callers` threads, each from an address of its own, each with a token from `tokens`."""

    def caller(address: str) -> Callable[[], None]:
        return lambda: call_with_bogus_token(rig, tokens(), statuses, address=address, times=times)

    return in_threads([caller(f"127.0.1.{index + 1}") for index in range(callers)])


def in_threads(calls: list[Callable[[], None]]) -> list[threading.Thread]:
    threads = [threading.Thread(target=call, daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    return threads


def test_a_burst_of_requests_with_one_bogus_token_costs_about_one_review(
    slow_rig: Callable[[float], tuple[Rig, SlowTokenReviewer]],
) -> None:
    rig, reviewer = slow_rig(0.02)
    statuses: list[int] = []

    threads = from_many_addresses(rig, lambda: "nope", statuses, callers=20, times=10)
    for thread in threads:
        thread.join(60)

    assert statuses == [401] * 200
    assert reviewer.review_count <= 3  # one, give or take a race at the very start


def test_an_authorized_agent_is_answered_while_bad_tokens_hold_every_review(
    slow_rig: Callable[[float], tuple[Rig, SlowTokenReviewer]],
) -> None:
    rig, reviewer = slow_rig(0.2)
    agent = rig.client("n1")
    agent.create()  # its decision is cached from here on
    reviewer.gate.clear()  # from now on no review answers until the test is done
    statuses: list[int] = []
    # More callers with made-up tokens than the apiserver has worker threads (32).
    flood = from_many_addresses(rig, lambda: secrets.token_hex(16), statuses, callers=48)
    wait_until(lambda: reviewer.in_review >= 8, "every review thread held", interval=0.05)
    wait_until(  # the rest of the flood reaches the server: connected, or answered already
        lambda: open_connections(rig, "agents") + len(statuses) >= 48, "the whole flood"
    )

    answered: list[float] = []
    reading = in_threads([lambda: answered.append(timed(agent.get))])
    # Without a fix the GET would wait for the reviews, which stay held until it is answered.
    wait_until(lambda: bool(answered), "the agent's GET answered while the reviews are held")
    reviewer.gate.set()
    for thread in flood + reading:
        thread.join(60)

    assert reviewer.in_review == 0 and set(statuses) <= {401, 503}
    assert answered[0] < math.inf, "the agent's client gave up waiting"


def test_one_address_flooding_made_up_tokens_cannot_delay_a_new_agents_review(
    slow_rig: Callable[[float], tuple[Rig, SlowTokenReviewer]],
) -> None:
    rig, reviewer = slow_rig(1.0)
    statuses: list[int] = []
    # 48 callers from one pod's address: without a cap per address, their reviews would fill
    # the review threads (8) and the queue, six rounds of a second each, and the agent's
    # client gives up after 5 s.
    flood = in_threads(
        [
            lambda: call_with_bogus_token(rig, secrets.token_hex(16), statuses, address="127.0.1.1")
            for _ in range(48)
        ]
    )
    wait_until(
        lambda: len(statuses) >= 40 or reviewer.in_review >= 8,
        "the flood answered or holding every review thread",
        interval=0.05,
    )

    first_call = timed(rig.client("n2").node_uid)  # a new token: it must be reviewed
    for thread in flood:
        thread.join(60)

    assert set(statuses) <= {401, 429} and 429 in statuses
    assert first_call < math.inf, "the new agent's client gave up waiting (after 5 s)"


def timed(call: Callable[[], object]) -> float:
    """Seconds `call` took; infinite when it gave up (the client timed out)."""
    started = time.perf_counter()
    try:
        call()
    except UnavailableError:
        return math.inf
    return time.perf_counter() - started
