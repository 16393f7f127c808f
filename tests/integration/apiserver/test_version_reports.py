"""Over HTTPS: a status naming a running version no host offered is a 422 with its reason; an
agent whose report is refused keeps running and retries (no crash, no traceback); and what a
caller sends cannot mint label values in the request metrics."""

from __future__ import annotations

import http.client
import ssl
import urllib.request
from urllib.parse import urlsplit

import pytest
from prometheus_client.parser import text_string_to_metric_families

from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import InvalidObjectError
from brupop.services.agent.agent import NodeAgent
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import Next
from brupop.services.agent.stop import StopFlag
from tests.fakes.clock import FakeClock
from tests.fakes.update_api import FakeUpdateApi
from tests.integration.apiserver.conftest import Rig
from tests.support.agent_rig import RecordedLog


def _status(current: str, target: str) -> AgentShadowStatus:
    return AgentShadowStatus(
        current_version=current, target_version=target, current_state=UpdateState.IDLE
    )


def test_a_version_no_host_offered_is_refused_with_422_and_a_short_reason(rig: Rig) -> None:
    agent = rig.client("n1")
    agent.create()
    agent.update_status(_status("1.19.0", "1.20.0"))
    with pytest.raises(InvalidObjectError, match=r"422: .*9\.9\.9 was never offered"):
        agent.update_status(_status("9.9.9", "9.9.9"))
    taken = agent.update_status(_status("1.20.0", "1.20.0"))
    assert taken.status is not None and taken.status.current_version == "1.20.0"


def test_an_agent_whose_report_is_refused_retries_later_and_keeps_running(rig: Rig) -> None:
    clock = FakeClock()
    host = FakeUpdateApi("1.19.0", "1.20.0", clock=clock)
    client = rig.client("n1")
    log = RecordedLog()
    agent = NodeAgent(host, client, client, clock, AgentConfig(), stop=StopFlag(), log=log)
    assert agent.tick() is Next.WAIT_FOR_CHANGE
    host.current_version = "7.7.7"  # a host (or an agent) claiming a version never offered
    assert agent.tick() is Next.RETRY_LATER
    stored = rig.cluster.shadows.get("brs-n1").status
    assert stored is not None and stored.current_version == "1.19.0"
    (warning,) = [line for line in log.at("warning") if "422" in str(line.fields)]
    assert "never offered" in warning.fields["reason"]
    assert "exc_info" not in warning.fields


def test_uncommon_methods_share_one_label_value_in_the_request_metrics(rig: Rig) -> None:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    parts = urlsplit(rig.server.base_url)
    for method in ("PROPFIND", "MKCOL", "LOCK", "UNLOCK", "SEARCH", "PURGE", "REPORT"):
        connection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, context=context, timeout=5
        )
        try:
            connection.request(method, "/ping")
            connection.getresponse().read()
        finally:
            connection.close()
    with urllib.request.urlopen(rig.server.base_url + "/metrics", context=context) as answer:
        text = answer.read().decode()
    methods = {
        sample.labels["method"]
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "brupop_apiserver_requests_total"
    }
    assert methods <= {"GET", "other"}, methods
    assert "other" in methods
