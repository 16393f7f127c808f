"""What a settings model reads from the environment: each field's variable, by its exact name.

The controller's and the apiserver's settings are pydantic models whose fields name their
variables as aliases; this picks those variables out of the environment, so that the model
checks them and nothing reads the environment but this. pydantic-settings did it before: it
cost the controller 1.5 MiB resident (dependency-injector imports it whenever it is installed),
and it also took each variable in any case and under its field's Python name, which no
document named (the agent and the original read the names as written).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from brupop.entrypoints.settings_error import SettingsError

Settings = TypeVar("Settings", bound=BaseModel)
# The controller's and the apiserver's models: unknown variables ignored, defaults checked too.
SETTINGS_CONFIG = ConfigDict(
    extra="ignore", frozen=True, populate_by_name=True, validate_default=True
)


def variables(model: type[BaseModel]) -> tuple[str, ...]:
    """The environment variables `model` reads: its fields' aliases, in field order."""
    return tuple(info.alias for info in model.model_fields.values() if info.alias)


def environment_values(model: type[BaseModel], environ: Mapping[str, str]) -> dict[str, str]:
    """The set variables of `model` with their text, for `model.model_validate` (a variable
    absent from the result takes its field's default)."""
    return {name: environ[name] for name in variables(model) if name in environ}


def read_settings(model: type[Settings], environ: Mapping[str, str]) -> Settings:
    """`model` from the variables of `environ` it reads; SettingsError with one line naming the
    first variable at fault."""
    try:
        return model.model_validate(environment_values(model, environ))
    except ValidationError as error:
        raise SettingsError.first_of(error) from None


def default_bind_address() -> str:
    """All IPv6 addresses (which Linux serves dual-stack) when the cluster's API address is IPv6,
    as the original decides; all IPv4 addresses otherwise."""
    return "::" if ":" in os.environ.get("KUBERNETES_SERVICE_HOST", "") else "0.0.0.0"
