"""BoundedGet: a GET that reads at most its cap of the body, ends by its deadline whatever the
server (or the resolver) does, and connects only where the address allowance allows."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from brupop.adapters.http.bounded_get import BoundedGet, BoundedGetError
from brupop.adapters.http.host_lookup import LOOKUPS_MAX
from tests.support.loopback_reach import loopback_http
from tests.support.probe_server import BIG_BODY_BYTES, BIG_PATH, ProbeServer
from tests.support.silent_server import SilentServer

# The servers and resolvers here hold for 30 s and then end otherwise (a close, an answer): a
# call that ends with the deadline's own reason was ended by its deadline, however loaded the
# machine; only "not before the deadline" is checked on the clock (load cannot break it).


def test_a_body_past_the_cap_is_cut_and_marked_truncated() -> None:
    with ProbeServer() as server:
        answer = loopback_http().get(server.base_url + BIG_PATH, 10, limit=4096)

    assert answer.status == 200
    assert len(answer.body) == 4096 < BIG_BODY_BYTES
    assert answer.truncated


def test_a_body_within_the_cap_is_read_whole() -> None:
    with ProbeServer() as server:
        server.answers["/x"] = (200, b'{"ok": true}')
        answer = loopback_http().get(server.base_url + "/x", 10, limit=4096)

    assert (answer.body, answer.truncated) == (b'{"ok": true}', False)


@pytest.mark.parametrize(
    "url", ["ftp://example.org/", "http:///nohost", "not a url", "http://[::1/", "http://a:99999/"]
)
def test_a_url_that_is_not_http_is_refused_before_any_connection(url: str) -> None:
    with pytest.raises(BoundedGetError, match="not an http"):
        loopback_http().get(url, 1)


def test_credentials_in_the_url_are_refused_and_never_repeated() -> None:
    with ProbeServer() as server:
        url = server.base_url.replace("//", "//admin:s3cret@")
        with pytest.raises(BoundedGetError) as refused:
            loopback_http().get(url, 1)

        assert server.requests == []
    assert "credentials" in str(refused.value) and "s3cret" not in str(refused.value)


@pytest.mark.parametrize("server", [SilentServer, lambda: SilentServer(drip=True)])
def test_a_server_that_holds_the_exchange_is_left_at_the_deadline(
    server: type[SilentServer],
) -> None:
    with server() as silent:
        started = time.monotonic()
        with pytest.raises(BoundedGetError, match=r"no answer within 0\.5 s"):
            loopback_http().get(silent.url + "/healthz", 0.5)
        took = time.monotonic() - started

    assert took >= 0.45


class HangingResolver:
    """A resolver that never answers until released (as a dead DNS server, for at most 30 s),
    counting calls and answers."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0
        self.answered = 0

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls += 1
        self.release.wait(30)
        self.answered += 1
        return ["127.0.0.1"]


def test_a_hanging_name_lookup_is_left_at_the_deadline() -> None:
    resolver = HangingResolver()
    try:
        with pytest.raises(BoundedGetError, match="not resolved in time"):
            loopback_http(resolver).get("http://prometheus.monitoring:9090/", 0.3)
        answered = resolver.answered
    finally:
        resolver.release.set()

    assert (resolver.calls, answered) == (1, 0)  # left while the lookup still hung


def test_stuck_lookups_are_bounded_and_later_ones_fail_at_once() -> None:
    resolver = HangingResolver()
    http = loopback_http(resolver)
    threads_before = threading.active_count()
    try:
        for _ in range(LOOKUPS_MAX):
            with pytest.raises(BoundedGetError, match="in time"):
                http.get("http://stuck.example:80/", 0.05)
        # Each refused at once: one that waited behind the stuck lookups would end at its 5 s
        # deadline with "not resolved in time" instead.
        for _ in range(20):
            with pytest.raises(BoundedGetError, match="earlier lookups are stuck"):
                http.get("http://stuck.example:80/", 5)
        threads_stuck = threading.active_count() - threads_before
    finally:
        resolver.release.set()

    assert resolver.calls == LOOKUPS_MAX
    assert threads_stuck <= LOOKUPS_MAX


def test_the_connection_goes_to_the_checked_address_and_keeps_the_name() -> None:
    with ProbeServer() as server:
        server.answers["/healthz"] = (204, b"")
        port = server.base_url.rsplit(":", 1)[1]
        http = loopback_http(lambda host, port: ["127.0.0.1"] if host == "probe.test" else [])

        answer = http.get(f"http://probe.test:{port}/healthz", 5)

    assert answer.status == 204
    assert server.hosts == [f"probe.test:{port}"]


def test_a_name_that_rebinds_to_a_refused_address_is_refused_on_that_connection() -> None:
    answers = iter([["127.0.0.1"], ["169.254.169.254"], ["127.0.0.1", "169.254.169.254"]])
    with ProbeServer() as server:
        server.answers["/healthz"] = (200, b"")
        port = server.base_url.rsplit(":", 1)[1]
        http = loopback_http(lambda host, port: next(answers))
        url = f"http://rebinding.test:{port}/healthz"

        first = http.get(url, 5)
        with pytest.raises(BoundedGetError) as second:
            http.get(url, 5)
        with pytest.raises(BoundedGetError) as third:
            http.get(url, 5)

        assert len(server.requests) == 1
    assert first.status == 200
    for refused in (second, third):
        assert "refused: 169.254.169.254 is a cloud metadata address" in str(refused.value)


def test_the_default_policy_refuses_loopback() -> None:
    with ProbeServer() as server:
        server.answers["/healthz"] = (200, b"")
        with pytest.raises(BoundedGetError) as refused:
            BoundedGet().get(server.base_url + "/healthz", 5)

        assert server.requests == []
    assert str(refused.value) == (
        "refused: 127.0.0.1 is a loopback address (not allowed by PROBE_ALLOWED_NETWORKS)"
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata"),
        ("http://[fd00:ec2::254]/latest/", "fd00:ec2::254 is a cloud metadata address"),
        ("http://metadata.google.internal/computeMetadata/v1/", "is a cloud metadata service"),
        ("http://METADATA.google.internal./", "metadata.google.internal is a cloud metadata"),
        ("http://0x7f000001:8080/", "127.0.0.1 is a loopback address"),
        ("http://2130706433/", "127.0.0.1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "is a loopback address"),
        ("http://[::1]:9090/", "::1 is a loopback address"),
        ("http://0.0.0.0:9090/", "0.0.0.0 is an unspecified address"),
        ("http://169.254.10.1/", "169.254.10.1 is a link-local address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
        ("https://kubernetes.default.svc/api", "kubernetes.default.svc is the cluster's API"),
        ("https://kubernetes.default.svc.cluster.local:443/", "is the cluster's API server"),
        ("https://kubernetes/", "kubernetes is the cluster's API server"),
    ],
)
def test_the_default_policy_refuses_what_reaches_more_than_a_workload(
    url: str, reason: str
) -> None:
    with pytest.raises(BoundedGetError, match=r"^refused: ") as refused:
        BoundedGet().get(url, 2)

    assert reason in str(refused.value)


def _no_name_resolves(host: str, port: int) -> Sequence[str]:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def _is_address(url: str) -> bool:
    try:
        ipaddress.ip_address(urlsplit(url).hostname or "")
    except ValueError:
        return False
    return True


@settings(max_examples=300, deadline=2000)
@given(st.sampled_from(["http://", "https://", "", "ftp://"]), st.text(max_size=120))
def test_any_url_gives_an_answer_or_a_bounded_get_error(scheme: str, rest: str) -> None:
    url = scheme + rest
    assume(not _is_address(url))  # an address would be connected to, off loopback
    http = loopback_http(_no_name_resolves)
    with pytest.raises(BoundedGetError) as failed:
        http.get(url, 1)

    assert "\x1b" not in str(failed.value) and len(str(failed.value)) < 400
