"""Every number a brupop process reads is finite and bounded, and rules across settings hold.

The cases are drawn from the settings models' own fields: a numeric field added without an
upper bound (or allowing inf/nan/negative values) fails here with no change to this file.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

import pytest
from pydantic import BaseModel

from brupop.entrypoints.agent.settings import SOURCES, AgentSettings
from brupop.entrypoints.agent.settings import load_settings as load_agent
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.apiserver.settings import load_settings as load_apiserver
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.entrypoints.controller.settings import load_settings as load_controller
from brupop.entrypoints.settings_error import SettingsError

UNUSABLE = ("inf", "-inf", "nan", "1e12", "1000000000000", "-1")
NO_NAMESPACE_FILE = Path("/nonexistent/namespace")
Loader = Callable[[pytest.MonkeyPatch, dict[str, str]], object]


def _agent(_monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> object:
    return load_agent({"MY_NODE_NAME": "node-a", **env}, namespace_file=NO_NAMESPACE_FILE)


def _controller(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> object:
    for variable, value in {"MY_NODE_NAME": "node-a", "BRUPOP_CLUSTER": "memory", **env}.items():
        monkeypatch.setenv(variable, value)
    return load_controller()


def _apiserver(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> object:
    for variable, value in {"BRUPOP_CLUSTER": "memory", **env}.items():
        monkeypatch.setenv(variable, value)
    return load_apiserver()


PROCESSES: dict[str, tuple[type[Any], Loader]] = {
    "agent": (AgentSettings, _agent),
    "controller": (ControllerSettings, _controller),
    "apiserver": (ApiserverSettings, _apiserver),
}


def _is_number(annotation: Any) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_number(argument) for argument in get_args(annotation))
    return annotation in (int, float)


def _annotated_variables(model: type[Any]) -> Iterator[tuple[Any, str]]:
    """Each setting's type and variable: pydantic models' fields, or the agent's sources."""
    if model is AgentSettings:
        hints = get_type_hints(model)
        for source in SOURCES:
            yield hints[source.field], source.variable
        return
    assert issubclass(model, BaseModel)
    for info in model.model_fields.values():
        yield info.annotation, info.alias or str(info.validation_alias)


def _numeric_variables() -> Iterator[tuple[str, str]]:
    for process, (model, _) in PROCESSES.items():
        for annotation, variable in _annotated_variables(model):
            if _is_number(annotation):
                yield process, variable


NUMERIC = sorted(_numeric_variables())


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for _, variable in NUMERIC:
        monkeypatch.delenv(variable, raising=False)


def test_every_process_has_numeric_settings_to_check() -> None:
    assert {process for process, _ in NUMERIC} == set(PROCESSES)
    assert ("controller", "TIMEOUT_IDLE_SECONDS") in NUMERIC
    assert ("apiserver", "DRAIN_TIMEOUT_SECONDS") in NUMERIC


@pytest.mark.parametrize("value", UNUSABLE)
@pytest.mark.parametrize(("process", "variable"), NUMERIC, ids=[f"{p}-{v}" for p, v in NUMERIC])
def test_an_unusable_number_is_refused_at_start_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, process: str, variable: str, value: str
) -> None:
    _, load = PROCESSES[process]

    with pytest.raises(SettingsError) as refused:
        load(monkeypatch, {variable: value})

    assert refused.value.variable == variable
    assert str(refused.value).startswith(f"{variable}: ")


@pytest.mark.parametrize(
    ("process", "env", "variable", "reason"),
    [
        (
            "agent",
            {"APICLIENT_RETRY_BASE_SECONDS": "90", "APICLIENT_RETRY_MAX_SECONDS": "60"},
            "APICLIENT_RETRY_BASE_SECONDS",
            "must not exceed APICLIENT_RETRY_MAX_SECONDS",
        ),
        (
            "agent",
            {"HOST_POLL_INTERVAL_SECONDS": "30", "HOST_COMMAND_DEADLINE_SECONDS": "10"},
            "HOST_POLL_INTERVAL_SECONDS",
            "must not exceed HOST_COMMAND_DEADLINE_SECONDS",
        ),
        (
            "controller",
            {"LEADER_ELECTION_LEASE_SECONDS": "1", "LEADER_ELECTION_RENEW_SECONDS": "5"},
            "LEADER_ELECTION_LEASE_SECONDS",
            "at least twice LEADER_ELECTION_RENEW_SECONDS",
        ),
        (
            "controller",
            {"LEADER_ELECTION_LEASE_SECONDS": "15.5"},
            "LEADER_ELECTION_LEASE_SECONDS",
            "whole number of seconds",
        ),
        (
            "apiserver",
            {"EVICTION_RETRY_INTERVAL_SECONDS": "900", "DRAIN_TIMEOUT_SECONDS": "900"},
            "EVICTION_RETRY_INTERVAL_SECONDS",
            "shorter than DRAIN_TIMEOUT_SECONDS",
        ),
    ],
)
def test_a_rule_across_settings_is_checked_at_start(
    monkeypatch: pytest.MonkeyPatch, process: str, env: dict[str, str], variable: str, reason: str
) -> None:
    _, load = PROCESSES[process]

    with pytest.raises(SettingsError) as refused:
        load(monkeypatch, env)

    assert refused.value.variable == variable
    assert reason in refused.value.problem


@pytest.mark.parametrize("process", sorted(PROCESSES))
def test_the_defaults_pass_every_bound_and_rule(
    monkeypatch: pytest.MonkeyPatch, process: str
) -> None:
    _, load = PROCESSES[process]

    assert load(monkeypatch, {}) is not None


BAD_NAMES = [
    *[
        (process, "BRUPOP_NAMESPACE", name)
        for process in PROCESSES
        for name in ("brupop/../kube-system", "Brupop", "n" * 64)
    ],
    *[
        (process, "MY_NODE_NAME", name)
        for process in ("agent", "controller")
        for name in ("Node A", "node-a/../x", "n" * 254)
    ],
]


@pytest.mark.parametrize(("process", "variable", "name"), BAD_NAMES)
def test_every_process_refuses_a_name_kubernetes_would_not_take(
    process: str, variable: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _model, load = PROCESSES[process]

    with pytest.raises(SettingsError, match=variable):
        load(monkeypatch, {variable: name})
