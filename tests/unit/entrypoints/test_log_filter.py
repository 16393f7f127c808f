"""TRACING_FILTER_DIRECTIVE takes the original's EnvFilter forms and maps targets onto brupop's
processes; a malformed part stops the process at start naming the variable."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import structlog

from brupop.entrypoints.agent.settings import load_settings as load_agent
from brupop.entrypoints.controller.settings import load_settings as load_controller
from brupop.entrypoints.logging.log_filter import OFF, LogFilter
from brupop.entrypoints.logging.logs import start_logging
from brupop.entrypoints.settings_error import SettingsError


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.mark.parametrize(
    ("directive", "component", "level"),
    [
        ("off", "controller", OFF),
        ("OFF", "agent", OFF),
        ("0", "apiserver", OFF),
        ("warn", "agent", logging.WARNING),
        ("5", "agent", logging.DEBUG),
        ("trace", "agent", logging.DEBUG),
        ("controller=debug", "controller", logging.DEBUG),
        ("controller=debug", "agent", logging.INFO),
        ("controller::controller=trace", "controller", logging.DEBUG),
        ("controller", "controller", logging.DEBUG),
        ("error,apiserver=debug", "apiserver", logging.DEBUG),
        ("error,apiserver=debug", "agent", logging.ERROR),
        ("brupop=warn", "agent", logging.WARNING),
        ("models=debug,info", "apiserver", logging.DEBUG),
        ("controller=error,brupop=debug", "controller", logging.ERROR),
        ("agent[update{node=a}]=debug", "agent", logging.DEBUG),
        ("info,kube=debug,hyper", "controller", logging.INFO),
        ("", "agent", logging.INFO),
    ],
)
def test_the_originals_forms_set_each_processs_level(
    directive: str, component: str, level: int
) -> None:
    assert LogFilter.parse(directive, component).level == level


def test_targets_brupop_cannot_map_are_kept_to_be_reported() -> None:
    parsed = LogFilter.parse("info,kube=debug,agent=warn,hyper", "controller")

    assert parsed.unused == ("kube=debug", "hyper")


@pytest.mark.parametrize("directive", ["agent=loud", "controller=", "a b", "x[unclosed=info"])
def test_a_malformed_directive_is_refused_at_start(directive: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_agent({"MY_NODE_NAME": "node-a", "TRACING_FILTER_DIRECTIVE": directive})

    assert refused.value.variable == "TRACING_FILTER_DIRECTIVE"


def test_off_is_a_setting_the_controller_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.setenv("TRACING_FILTER_DIRECTIVE", "off")

    settings, _ = load_controller()

    assert settings.tracing_filter_directive == "off"


def test_off_logs_nothing_at_all(capsys: pytest.CaptureFixture[str]) -> None:
    log = start_logging("controller", "node-a", formatter="json", directive="off")

    log.critical("never.shown")
    log.error("never.shown")

    assert capsys.readouterr().err == ""


def test_a_directive_for_the_controller_reaches_its_debug_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = start_logging("controller", "node-a", formatter="json", directive="controller=debug")

    log.debug("shown.at.debug")

    assert '"shown.at.debug"' in capsys.readouterr().err


def test_unused_targets_are_named_once_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    start_logging("apiserver", None, formatter="json", directive="info,kube=debug")

    err = capsys.readouterr().err
    assert err.count("logging.directive_parts_unused") == 1
    assert "kube=debug" in err
