"""The agent's settings, read once from the environment with the original variable names.

A frozen pydantic model rather than pydantic-settings: the latter costs the agent ~15 MiB.
A bad value stops start-up with one line that names the variable (`SettingsError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from brupop.entrypoints.pod_namespace import (
    DEFAULT_NAMESPACE,
    SERVICE_ACCOUNT_NAMESPACE_FILE,
    service_account_namespace,
)

APISERVER_SERVICE = "brupop-apiserver"

Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
SecondsOrZero = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _env(name: str, default: Any = ..., **constraints: Any) -> Any:
    """A field read from environment variable `name`."""
    return Field(default, validation_alias=AliasChoices(name), **constraints)


class SettingsError(ValueError):
    """One environment variable holds a value the agent cannot use; the message names it."""


class AgentSettings(BaseModel):
    """Everything `brupop agent` reads from its environment."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=False)

    node_name: str = _env("MY_NODE_NAME", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    namespace: str = _env("BRUPOP_NAMESPACE", DEFAULT_NAMESPACE, min_length=1)
    apiserver_service_port: int = _env("APISERVER_SERVICE_PORT", 443, ge=1, le=65535)
    apiserver_url: str | None = _env("APISERVER_URL", None, pattern=r"^https?://[^\s/]+")
    cluster_domain: str = _env("CLUSTER_DOMAIN", "cluster.local", min_length=1)
    token_path: Path = _env(
        "AGENT_TOKEN_PATH",
        Path("/var/run/secrets/tokens/bottlerocket-agent-service-account-token"),
    )
    ca_path: Path = _env("AGENT_CA_PATH", Path("/etc/brupop-tls-keys/ca.crt"))
    apiclient_path: str = _env("APICLIENT_PATH", "apiclient", min_length=1)
    exclude_from_lb_wait_seconds: int = _env("EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC", 0, ge=0)
    loop_interval_seconds: Seconds = _env("AGENT_LOOP_INTERVAL_SECONDS", 5.0)
    update_check_interval_seconds: Seconds = _env("UPDATE_CHECK_INTERVAL_SECONDS", 120.0)
    reboot_wait_seconds: SecondsOrZero = _env("REBOOT_WAIT_SECONDS", 180.0)
    shadow_wait_seconds: Seconds = _env("SHADOW_WAIT_SECONDS", 30.0)
    apiclient_timeout_seconds: Seconds = _env("APICLIENT_TIMEOUT_SECONDS", 60.0)
    host_command_deadline_seconds: Seconds = _env("HOST_COMMAND_DEADLINE_SECONDS", 600.0)
    host_poll_interval_seconds: Seconds = _env("HOST_POLL_INTERVAL_SECONDS", 2.0)
    apiclient_rate_period_seconds: SecondsOrZero = _env("APICLIENT_RATE_PERIOD_SECONDS", 10.0)
    apiclient_rate_burst: int = _env("APICLIENT_RATE_BURST", 2, ge=1)
    apiclient_retries: int = _env("APICLIENT_RETRIES", 5, ge=0)
    apiclient_retry_base_seconds: SecondsOrZero = _env("APICLIENT_RETRY_BASE_SECONDS", 10.0)
    apiclient_retry_max_seconds: SecondsOrZero = _env("APICLIENT_RETRY_MAX_SECONDS", 60.0)
    apiserver_client_timeout_seconds: Seconds = _env("APISERVER_CLIENT_TIMEOUT_SECONDS", 10.0)
    drain_timeout_seconds: Seconds = _env("DRAIN_TIMEOUT_SECONDS", 900.0)
    termination_log: Path = _env("TERMINATION_LOG", Path("/dev/termination-log"))

    @field_validator("exclude_from_lb_wait_seconds", "apiserver_service_port", mode="before")
    @classmethod
    def _whole_number(cls, value: object) -> object:
        # The original parses these as integers: "1.5" or "30s" must be refused, not rounded.
        if isinstance(value, str) and not value.strip().isdigit():
            raise ValueError("must be a whole number")
        return value

    def apiserver_base_url(self) -> str:
        """APISERVER_URL if set, else the apiserver Service's in-cluster HTTPS address."""
        if self.apiserver_url:
            return self.apiserver_url.rstrip("/")
        host = f"{APISERVER_SERVICE}.{self.namespace}.svc.{self.cluster_domain}"
        return f"https://{host}:{self.apiserver_service_port}"


def load_settings(
    environ: Mapping[str, str], namespace_file: Path = SERVICE_ACCOUNT_NAMESPACE_FILE
) -> AgentSettings:
    """Read the settings from `environ`; raise SettingsError naming the first bad variable.

    Empty values count as unset. The namespace defaults to the pod's own (its service-account
    namespace file), else brupop's usual one.
    """
    values = {key: value.strip() for key, value in environ.items() if value.strip()}
    if "BRUPOP_NAMESPACE" not in values:
        pod_namespace = service_account_namespace(namespace_file)
        if pod_namespace:
            values["BRUPOP_NAMESPACE"] = pod_namespace
    try:
        return AgentSettings.model_validate(values)
    except ValidationError as error:
        raise SettingsError(_first_problem(error, values)) from None


def _first_problem(error: ValidationError, values: Mapping[str, str]) -> str:
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else "environment"
    if problem["type"] == "missing":
        return f"{name} is required but not set"
    message = str(problem["msg"]).removeprefix("Value error, ")
    return f"{name}={values.get(name, '')!r}: {message}"
