"""APISERVER_TOKEN_VERIFICATION chooses how agents' tokens are checked; a bad value stops the
apiserver naming the variable, and issuer keys that cannot be loaded make it unready, saying
why, instead of crashing it."""

from __future__ import annotations

import anyio
import pytest
from starlette.requests import Request

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.entrypoints.apiserver.container import ApiserverContainer, options_from
from brupop.entrypoints.apiserver.settings import load_settings
from brupop.entrypoints.settings_error import SettingsError
from brupop.services.apiserver.authorization.pods import AgentPodMirror
from tests.support.polling import wait_until

NS = "brupop-bottlerocket-aws"


def test_local_verification_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")

    assert options_from(load_settings()).token_verification == "local"


def test_tokenreview_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("APISERVER_TOKEN_VERIFICATION", "tokenreview")

    assert options_from(load_settings()).token_verification == "tokenreview"


def test_a_bad_verification_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("APISERVER_TOKEN_VERIFICATION", "trust-everyone")

    with pytest.raises(SettingsError, match="APISERVER_TOKEN_VERIFICATION"):
        load_settings()


def test_tokenreview_runs_no_pod_mirror() -> None:
    container = ApiserverContainer(
        options=ApiserverOptions(namespace=NS, token_verification="tokenreview")
    )
    container.cluster.override(InMemoryCluster(NS))

    assert container.agent_pods() is None


def test_keys_that_cannot_be_loaded_make_the_apiserver_unready_saying_why() -> None:
    cluster = InMemoryCluster(NS)
    cluster.token_reviewer.unavailable = True
    container = ApiserverContainer(options=ApiserverOptions(namespace=NS))
    container.cluster.override(cluster)
    mirror = container.agent_pods()
    assert isinstance(mirror, AgentPodMirror)
    mirror.start()
    try:
        wait_until(lambda: mirror.problem is not None and "could not" in mirror.problem)
        answer = anyio.run(container.handlers().ready, Request({"type": "http"}))
        cluster.token_reviewer.unavailable = False
        wait_until(lambda: mirror.problem is None, "the keys load once they can", seconds=5)
    finally:
        mirror.stop()

    assert answer.status_code == 503
    assert b"the issuer's keys could not be loaded" in bytes(answer.body)
