"""Every setting of the agent, the controller and the apiserver, from any text an environment
can hold (Unicode digits, control characters, undecodable bytes, huge values): the process
starts, or refuses with one SettingsError line naming the variable. Nothing else, quickly."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from brupop.entrypoints.agent.settings import load_settings as load_agent
from brupop.entrypoints.agent.settings import variables as agent_variables
from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.apiserver.settings import load_settings as load_apiserver
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.entrypoints.controller.settings import load_settings as load_controller
from brupop.entrypoints.settings_error import SettingsError
from tests.support.outside_input import environment_text, outside_text

NO_NAMESPACE_FILE = Path("/nonexistent/namespace")
KEPT = ("PATH", "HOME", "LANG", "TMPDIR")
MESSAGE_MAX_CHARS = 1_000


def _variables(model: type[BaseModel]) -> list[str]:
    names = (field.alias or str(field.validation_alias) for field in model.model_fields.values())
    return sorted(name for name in names if name and name != "None")


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """Only `values` (and the shell basics) in os.environ while the settings are read."""
    base = {key: os.environ[key] for key in KEPT if key in os.environ}
    with mock.patch.dict(os.environ, {**base, **values}, clear=True):
        yield


def _refused_cleanly(load: Callable[[], object], variable: str) -> None:
    try:
        load()
    except SettingsError as error:
        message = str(error)
        assert message.startswith(f"{error.variable}: ")
        assert "\n" not in message and len(message) <= MESSAGE_MAX_CHARS
        assert error.variable in (variable, "environment") or error.variable.isupper()


@settings(max_examples=150, deadline=1000)
@given(st.sampled_from(sorted(agent_variables())), outside_text())
def test_agent_settings_refuse_any_value_with_their_typed_error(variable: str, value: str) -> None:
    environ = {"MY_NODE_NAME": "node-a", variable: value}
    _refused_cleanly(lambda: load_agent(environ, namespace_file=NO_NAMESPACE_FILE), variable)


@settings(max_examples=150, deadline=1000)
@given(st.sampled_from(_variables(ControllerSettings)), environment_text())
@example("SCHEDULER_TIME_ZONE", "US")  # issue 20: IsADirectoryError
@example("SCHEDULER_CRON_EXPRESSION", "0 0 \u00b2 * * * *")  # issue 20: int() refused it
def test_controller_settings_refuse_any_value_with_their_typed_error(
    variable: str, value: str
) -> None:
    with _environment({"MY_NODE_NAME": "node-a", "BRUPOP_CLUSTER": "memory", variable: value}):
        _refused_cleanly(load_controller, variable)


@settings(max_examples=150, deadline=1000)
@given(st.sampled_from(_variables(ApiserverSettings)), environment_text())
def test_apiserver_settings_refuse_any_value_with_their_typed_error(
    variable: str, value: str
) -> None:
    with _environment({"BRUPOP_CLUSTER": "memory", variable: value}):
        _refused_cleanly(load_apiserver, variable)
