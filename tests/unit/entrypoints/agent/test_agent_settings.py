"""`brupop agent` settings: original names and defaults; a bad value stops start-up (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.domain.shadow_names import DEFAULT_NAMESPACE
from brupop.domain.value_objects import field_names
from brupop.entrypoints.agent.composition import AgentPorts, agent_config, launch
from brupop.entrypoints.agent.settings import REQUIRED, SOURCES, AgentSettings, load_settings
from brupop.entrypoints.settings_error import SettingsError
from brupop.ports.clock import Clock
from tests.fakes.clock import FakeClock

NODE = {"MY_NODE_NAME": "ip-10-0-0-1.us-west-2.compute.internal"}
NO_NAMESPACE_FILE = Path("/nonexistent/namespace")


def _load(**env: str) -> AgentSettings:
    return load_settings({**NODE, **env}, namespace_file=NO_NAMESPACE_FILE)


def test_defaults_are_the_originals() -> None:
    settings = _load()

    assert settings.apiserver_base_url() == (
        "https://brupop-apiserver.brupop-bottlerocket-aws.svc.cluster.local:443"
    )
    config = agent_config(settings)
    assert config.loop_interval_seconds == 5
    assert config.update_check_interval_seconds == 120
    assert config.reboot_wait_seconds == 180
    assert config.exclude_from_lb_wait_seconds == 0
    assert settings.apiclient_path == "apiclient"
    assert settings.termination_log == "/dev/termination-log"


def test_every_setting_is_read_from_one_variable_in_the_fields_order() -> None:
    assert tuple(source.field for source in SOURCES) == field_names(AgentSettings)
    variables = [source.variable for source in SOURCES]
    assert len(set(variables)) == len(variables)
    assert {"node_name"} == REQUIRED


def test_apiserver_address_follows_namespace_domain_and_port_or_the_override() -> None:
    settings = _load(
        BRUPOP_NAMESPACE="upd", CLUSTER_DOMAIN="corp.example", APISERVER_SERVICE_PORT="8443"
    )
    assert settings.apiserver_base_url() == "https://brupop-apiserver.upd.svc.corp.example:8443"
    assert _load(APISERVER_URL="https://127.0.0.1:9443/").apiserver_base_url() == (
        "https://127.0.0.1:9443"
    )


def test_namespace_defaults_to_the_pods_own(tmp_path: Path) -> None:
    namespace_file = tmp_path / "namespace"
    namespace_file.write_text("updates-ns\n")

    assert load_settings(NODE, namespace_file=namespace_file).namespace == "updates-ns"


def test_a_namespace_file_that_is_not_text_leaves_brupops_usual_namespace(tmp_path: Path) -> None:
    namespace_file = tmp_path / "namespace"
    namespace_file.write_bytes(b"\xff\xfe\n")

    assert load_settings(NODE, namespace_file=namespace_file).namespace == DEFAULT_NAMESPACE


def test_a_huge_namespace_file_is_read_within_bounds_and_refused_by_name(tmp_path: Path) -> None:
    namespace_file = tmp_path / "namespace"
    namespace_file.write_bytes(b"x" * 10_000_000)

    with pytest.raises(SettingsError, match="BRUPOP_NAMESPACE") as refused:
        load_settings(NODE, namespace_file=namespace_file)
    assert len(str(refused.value)) < 2000


def test_empty_values_count_as_unset() -> None:
    assert _load(EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC="", APISERVER_URL=" ").apiserver_url is None


def test_a_positive_lb_wait_turns_the_exclusion_on() -> None:
    assert (
        agent_config(_load(EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC="30")).exclude_from_lb_wait_seconds
        == 30
    )


BAD_VALUES = [
    ("MY_NODE_NAME", "Not A Node"),
    ("MY_NODE_NAME", "n" * 254),
    ("BRUPOP_NAMESPACE", "brupop/../kube-system"),
    ("BRUPOP_NAMESPACE", "n" * 64),
    ("CLUSTER_DOMAIN", "cluster.local/x"),
    ("CLUSTER_DOMAIN", "agent@evil.example"),
    ("APISERVER_SERVICE_PORT", "https"),
    ("APISERVER_SERVICE_PORT", "70000"),
    ("APISERVER_URL", "brupop-apiserver:443"),
    ("APISERVER_URL", "https://agent@brupop-apiserver"),
    ("APISERVER_URL", "https://brupop-apiserver:99999"),
    ("APISERVER_URL", "https://brupop-apiserver/?watch=1"),
    ("EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", "ten"),
    ("EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", "-5"),
    ("EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", "1.5"),
    ("AGENT_LOOP_INTERVAL_SECONDS", "0"),
    ("UPDATE_CHECK_INTERVAL_SECONDS", "2m"),
    ("REBOOT_WAIT_SECONDS", "-1"),
    ("SHADOW_WAIT_SECONDS", "inf"),
    ("APICLIENT_TIMEOUT_SECONDS", "nan"),
    ("HOST_COMMAND_DEADLINE_SECONDS", "0"),
    ("HOST_POLL_INTERVAL_SECONDS", "fast"),
    ("APICLIENT_RATE_PERIOD_SECONDS", "-10"),
    ("APICLIENT_RATE_BURST", "0"),
    ("APICLIENT_RETRIES", "many"),
    ("APICLIENT_RETRY_BASE_SECONDS", "x"),
    ("APICLIENT_RETRY_MAX_SECONDS", "-1"),
    ("APISERVER_CLIENT_TIMEOUT_SECONDS", "0"),
    ("DRAIN_TIMEOUT_SECONDS", "forever"),
    ("DRAIN_TIMEOUT_SECONDS", "1e12"),
    ("LOGGING_FORMATTER", "xml"),
    ("TRACING_FILTER_DIRECTIVE", "agent=loud"),
]


def _never_built(settings: AgentSettings, clock: Clock) -> AgentPorts:
    raise AssertionError("the agent must not start with bad settings")


@pytest.mark.parametrize(("name", "value"), BAD_VALUES, ids=[f"{n}={v}" for n, v in BAD_VALUES])
def test_bad_variable_stops_start_up_naming_it_with_exit_2(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_NODE_NAME", NODE["MY_NODE_NAME"])
    monkeypatch.setenv(name, value)

    assert launch([], _never_built, FakeClock()) == 2

    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert name in err
    assert "Traceback" not in err


def test_a_negative_lb_wait_is_refused_as_out_of_range_not_as_no_number(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_NODE_NAME", NODE["MY_NODE_NAME"])
    monkeypatch.setenv("EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", "-1")

    assert launch([], _never_built, FakeClock()) == 2

    assert "should be digits only, a whole number from 0 to" in capsys.readouterr().err


def test_missing_node_name_stops_start_up_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("MY_NODE_NAME", raising=False)

    assert launch([], _never_built, FakeClock()) == 2

    assert "MY_NODE_NAME: required" in capsys.readouterr().err


def test_settings_error_names_the_variable() -> None:
    with pytest.raises(SettingsError, match="REBOOT_WAIT_SECONDS"):
        _load(REBOOT_WAIT_SECONDS="soon")


def test_unexpected_arguments_are_refused_and_help_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert launch(["--bogus"], _never_built, FakeClock()) == 2
    assert launch(["--help"], _never_built, FakeClock()) == 0
    assert "MY_NODE_NAME" in capsys.readouterr().out


def test_an_unexpected_argument_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert launch(["--foo"], _never_built, FakeClock()) == 2

    assert capsys.readouterr().err.startswith("brupop agent: unexpected argument '--foo'")
