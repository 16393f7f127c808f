"""The agent's client retries only what may succeed later: connection errors, 429 and 5xx."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from brupop.adapters.apiserver_client import ApiserverClient, RetrySchedule
from brupop.adapters.apiserver_client.transport import MAX_TOKEN_BYTES, HttpsTransport
from brupop.ports.errors import ForbiddenError, UnauthorizedError, UnavailableError
from tests.integration.apiserver.conftest import NS, Rig, agent_pod
from tests.support.tls import make_certificates

RETRIES = RetrySchedule(retries=3, base_seconds=0.01, cap_seconds=0.02)


def client_with_sleeps(
    base_url: str, token_path: Path, ca_path: Path, node: str = "n1"
) -> tuple[ApiserverClient, list[float]]:
    sleeps: list[float] = []
    transport = HttpsTransport(
        base_url=base_url,
        node_name=node,
        token_path=token_path,
        ca_path=ca_path,
        retry=RETRIES,
        sleep=sleeps.append,
    )
    client = ApiserverClient(
        base_url=base_url,
        node_name=node,
        token_path=token_path,
        ca_path=ca_path,
        timeout_seconds=2.0,
        drain_timeout_seconds=2.0,
        transport=transport,
    )
    return client, sleeps


def token_file(rig: Rig, tmp_path: Path, pod: str) -> Path:
    path = tmp_path / f"token-{pod}"
    path.write_text(rig.cluster.issue_token(NS, pod))
    return path


def test_a_failing_token_review_is_retried_then_reported_unavailable(
    rig: Rig, tmp_path: Path
) -> None:
    client, sleeps = client_with_sleeps(
        rig.server.base_url, token_file(rig, tmp_path, agent_pod("n1")), rig.certs.ca_path
    )
    rig.cluster.token_reviewer.unavailable = True

    with pytest.raises(UnavailableError):
        client.get()

    assert len(sleeps) == RETRIES.retries
    assert all(0 <= delay <= RETRIES.cap_seconds for delay in sleeps)
    client.close()


def test_a_refusal_is_not_retried(rig: Rig, tmp_path: Path) -> None:
    client, sleeps = client_with_sleeps(
        rig.server.base_url, token_file(rig, tmp_path, agent_pod("n2")), rig.certs.ca_path
    )

    with pytest.raises(ForbiddenError):
        client.get()

    assert sleeps == []
    client.close()


def test_an_unknown_token_is_not_retried(rig: Rig, tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("not-a-token")
    client, sleeps = client_with_sleeps(rig.server.base_url, path, rig.certs.ca_path)

    with pytest.raises(UnauthorizedError):
        client.get()

    assert sleeps == []
    client.close()


def test_connection_errors_are_retried_then_reported_unavailable(rig: Rig, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    client, sleeps = client_with_sleeps(
        f"https://127.0.0.1:{closed_port}",
        token_file(rig, tmp_path, agent_pod("n1")),
        rig.certs.ca_path,
    )

    with pytest.raises(UnavailableError):
        client.get()

    assert len(sleeps) == RETRIES.retries


def test_the_token_file_is_read_again_on_every_call(rig: Rig, tmp_path: Path) -> None:
    path = token_file(rig, tmp_path, agent_pod("n1"))
    client, _ = client_with_sleeps(rig.server.base_url, path, rig.certs.ca_path)
    client.get()

    path.write_text("rotated-to-something-invalid")
    with pytest.raises(UnauthorizedError):
        client.get()

    path.write_text(rig.cluster.issue_token(NS, agent_pod("n1")))
    assert client.get() is None
    client.close()


def test_a_missing_token_file_is_an_authentication_problem(rig: Rig, tmp_path: Path) -> None:
    client, sleeps = client_with_sleeps(rig.server.base_url, tmp_path / "absent", rig.certs.ca_path)

    with pytest.raises(UnauthorizedError):
        client.get()
    assert sleeps == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b"x" * (MAX_TOKEN_BYTES + 1), "longer than"),
        (b"\xff\xfe-not-text", "not one line of ASCII text"),
        (b"a-token\r\nX-Injected: yes", "not one line of ASCII text"),
    ],
    ids=["empty", "huge", "binary", "two-lines"],
)
def test_a_token_file_that_holds_no_token_is_an_authentication_problem_that_says_why(
    rig: Rig, tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "token"
    path.write_bytes(content)
    client, sleeps = client_with_sleeps(rig.server.base_url, path, rig.certs.ca_path)

    with pytest.raises(UnauthorizedError, match=reason):
        client.get()
    assert sleeps == []


def test_a_server_the_ca_does_not_vouch_for_is_refused(rig: Rig, tmp_path: Path) -> None:
    stranger = make_certificates(tmp_path / "other-ca")
    client, _ = client_with_sleeps(
        rig.server.base_url, token_file(rig, tmp_path, agent_pod("n1")), stranger.ca_path
    )

    with pytest.raises(UnavailableError):
        client.get()
