"""What a settings model reads from the environment: each field's variable, by its exact name.

The controller's and the apiserver's settings are pydantic models whose fields name their
variables as aliases; this picks those variables out of the environment, so that the model
checks them and nothing reads the environment but this. pydantic-settings did it before: it
cost the controller 1.5 MiB resident (dependency-injector imports it whenever it is installed),
and it also took each variable in any case and under its field's Python name, which no
document named (the agent and the original read the names as written).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel


def variables(model: type[BaseModel]) -> tuple[str, ...]:
    """The environment variables `model` reads: its fields' aliases, in field order."""
    return tuple(info.alias for info in model.model_fields.values() if info.alias)


def environment_values(model: type[BaseModel], environ: Mapping[str, str]) -> dict[str, str]:
    """The set variables of `model` with their text, for `model.model_validate` (a variable
    absent from the result takes its field's default)."""
    return {name: environ[name] for name in variables(model) if name in environ}
