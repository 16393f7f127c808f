"""The controller and the apiserver read each setting from its variable, by its exact name."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from brupop.entrypoints.apiserver.settings import ApiserverSettings
from brupop.entrypoints.apiserver.settings import load_settings as load_apiserver
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.entrypoints.controller.settings import load_settings as load_controller
from brupop.entrypoints.environment_values import environment_values, variables
from brupop.entrypoints.settings_error import SettingsError

CONTROLLER = {"MY_NODE_NAME": "node-a", "BRUPOP_CLUSTER": "memory", "BRUPOP_NAMESPACE": "ns"}
APISERVER = {"BRUPOP_CLUSTER": "memory", "BRUPOP_NAMESPACE": "ns"}


@pytest.mark.parametrize("model", [ControllerSettings, ApiserverSettings])
def test_every_field_is_read_from_a_variable(model: type[BaseModel]) -> None:
    assert len(variables(model)) == len(model.model_fields)
    assert "BRUPOP_CLUSTER" in variables(model)


def test_only_the_models_variables_are_picked() -> None:
    environ = {"MY_NODE_NAME": "node-a", "HOME": "/root", "TERM": "dumb"}

    assert environment_values(ControllerSettings, environ) == {"MY_NODE_NAME": "node-a"}


def test_the_settings_come_from_the_environment_given() -> None:
    settings, config = load_controller(environ={**CONTROLLER, "CONTROLLER_TICK_SECONDS": "7"})

    assert settings.tick_seconds == 7.0
    assert config.tick_seconds == 7.0
    assert load_apiserver({**APISERVER, "TOKEN_REVIEW_THREADS": "3"}).token_review_threads == 3


def test_a_variable_in_another_case_is_not_read() -> None:
    settings, _ = load_controller(environ={**CONTROLLER, "controller_tick_seconds": "7"})

    assert settings.tick_seconds == 2.0


def test_a_fields_python_name_is_not_a_variable() -> None:
    with pytest.raises(SettingsError) as refused:
        load_controller(environ={"NODE_NAME": "node-a", "node_name": "node-a"})

    assert refused.value.variable == "MY_NODE_NAME"
    assert load_apiserver({**APISERVER, "TOKEN_REVIEW_THREADS": "3", "CLUSTER": "x"}).cluster == (
        "memory"
    )


def test_a_bad_value_is_still_refused_naming_its_variable() -> None:
    with pytest.raises(SettingsError) as refused:
        load_apiserver({**APISERVER, "TOKEN_REVIEW_THREADS": "0"})

    assert refused.value.variable == "TOKEN_REVIEW_THREADS"
