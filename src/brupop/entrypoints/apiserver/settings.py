"""The apiserver's settings, read once from the environment (original variable names kept).

A bad value stops the process at start with one line naming the variable (exit 2).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from brupop.entrypoints.apiserver.admission import ConnectionLimits
from brupop.entrypoints.apiserver.http_protocol import HeadLimits
from brupop.entrypoints.apiserver.server import ServerLimits
from brupop.entrypoints.pod_namespace import pod_namespace
from brupop.services.apiserver.drain import DrainTimings

TLS_DIR = Path("/etc/brupop-tls-keys")


def default_bind_address() -> str:
    """All IPv6 addresses (which Linux serves dual-stack) when the cluster's API address is IPv6,
    as the original decides; all IPv4 addresses otherwise."""
    return "::" if ":" in os.environ.get("KUBERNETES_SERVICE_HOST", "") else "0.0.0.0"


class SettingsError(ValueError):
    """One line naming the variable that holds a value the apiserver cannot use."""


class ApiserverSettings(BaseSettings):
    """Environment variables of `brupop apiserver`."""

    model_config = SettingsConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    internal_port: int = Field(8443, ge=1, le=65535, alias="APISERVER_INTERNAL_PORT")
    bind_address: str = Field(
        default_factory=default_bind_address, min_length=1, alias="APISERVER_BIND_ADDRESS"
    )
    max_connections: int = Field(1024, ge=1, le=65536, alias="APISERVER_MAX_CONNECTIONS")
    handshake_timeout_seconds: float = Field(
        5.0, ge=0.1, le=60, alias="APISERVER_TLS_HANDSHAKE_TIMEOUT_SECONDS"
    )
    header_timeout_seconds: float = Field(
        5.0, ge=0.1, le=60, alias="APISERVER_HEADER_TIMEOUT_SECONDS"
    )
    tls_cert_path: Path = Field(TLS_DIR / "tls.crt", alias="APISERVER_TLS_CERT_PATH")
    tls_key_path: Path = Field(TLS_DIR / "tls.key", alias="APISERVER_TLS_KEY_PATH")
    drain_timeout_seconds: float = Field(900.0, gt=0, alias="DRAIN_TIMEOUT_SECONDS")
    eviction_retry_interval_seconds: float = Field(
        5.0, gt=0, alias="EVICTION_RETRY_INTERVAL_SECONDS"
    )
    pod_deletion_timeout_seconds: float = Field(300.0, gt=0, alias="POD_DELETION_TIMEOUT_SECONDS")
    token_review_cache_seconds: float = Field(30.0, ge=0, alias="TOKEN_REVIEW_CACHE_SECONDS")
    namespace: str = Field(default_factory=pod_namespace, min_length=1, alias="BRUPOP_NAMESPACE")
    cluster: Literal["kubernetes", "memory"] = Field("kubernetes", alias="BRUPOP_CLUSTER")
    logging_formatter: str = Field("auto", alias="LOGGING_FORMATTER")
    tracing_filter_directive: str = Field("info", alias="TRACING_FILTER_DIRECTIVE")
    termination_log: Path = Field(Path("/dev/termination-log"), alias="TERMINATION_LOG")

    @model_validator(mode="after")
    def _port_is_given_in_a_cluster(self) -> ApiserverSettings:
        if self.cluster == "kubernetes" and "internal_port" not in self.model_fields_set:
            raise ValueError("APISERVER_INTERNAL_PORT: required when BRUPOP_CLUSTER=kubernetes")
        return self

    def server_limits(self) -> ServerLimits:
        """Bounds on connections and request heads."""
        return ServerLimits(
            connections=ConnectionLimits(
                max_connections=self.max_connections,
                handshake_timeout_seconds=self.handshake_timeout_seconds,
            ),
            head=HeadLimits(header_timeout_seconds=self.header_timeout_seconds),
        )

    def drain_timings(self) -> DrainTimings:
        """The drain's bounds and retry interval."""
        return DrainTimings(
            timeout_seconds=self.drain_timeout_seconds,
            retry_interval_seconds=self.eviction_retry_interval_seconds,
            deletion_timeout_seconds=self.pod_deletion_timeout_seconds,
        )


def load_settings() -> ApiserverSettings:
    """Read the environment; SettingsError with one line naming the variable on a bad value."""
    try:
        return ApiserverSettings()
    except ValidationError as error:
        raise SettingsError(_first_problem(error)) from None


def _first_problem(error: ValidationError) -> str:
    problem = error.errors(include_url=False)[0]
    location = problem.get("loc", ())
    variable = str(location[0]) if location else ""
    message = str(problem.get("msg", "invalid value")).removeprefix("Value error, ")
    if not variable:
        return message
    value = problem.get("input")
    shown = f" (got {value!r})" if isinstance(value, str) and len(value) < 80 else ""
    return f"{variable}: {message}{shown}"
