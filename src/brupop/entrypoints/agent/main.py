"""`brupop agent`: the node agent over its real adapters (apiclient, the brupop apiserver).

Exit codes: 0 stopped (SIGTERM) or rebooting into an update, 1 fatal, 2 bad settings.
"""

from __future__ import annotations

import os

from brupop.adapters.apiclient.update_api import ApiclientUpdateApi
from brupop.adapters.system.shared_clock import clock_from_environment
from brupop.entrypoints.agent.composition import AgentPorts, launch
from brupop.entrypoints.agent.settings import AgentSettings

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.adapters.apiserver_client import ApiserverClient
    from brupop.ports.clock import Clock


def main(argv: list[str]) -> int:
    """Run the agent until it stops, reboots its node, or fails; return the exit code. Its
    clock is the machine's, or the one a simulation shares with it (BRUPOP_SIM_CLOCK_FILE)."""
    return launch(argv, real_ports, clock_from_environment(os.environ))


def real_ports(settings: AgentSettings, clock: Clock) -> AgentPorts:
    """The production adapters: `apiclient` for the host, the apiserver for the cluster."""
    apiserver = build_apiserver_client(settings)
    return AgentPorts(
        update_api=build_update_api(settings, clock),
        shadow_store=apiserver,
        node_operations=apiserver,
    )


def build_update_api(settings: AgentSettings, clock: Clock) -> ApiclientUpdateApi:
    """The host's update API through the `apiclient` binary."""
    return ApiclientUpdateApi(
        clock,
        apiclient_path=settings.apiclient_path,
        timeout_seconds=settings.apiclient_timeout_seconds,
        rate_period_seconds=settings.apiclient_rate_period_seconds,
        rate_burst=settings.apiclient_rate_burst,
        retries=settings.apiclient_retries,
        retry_base_seconds=settings.apiclient_retry_base_seconds,
        retry_max_seconds=settings.apiclient_retry_max_seconds,
        poll_interval_seconds=settings.host_poll_interval_seconds,
        command_deadline_seconds=settings.host_command_deadline_seconds,
    )


def build_apiserver_client(settings: AgentSettings) -> ApiserverClient:
    """The brupop apiserver over HTTPS: this node's shadow and its node operations."""
    # Imported here so that test scenarios with a fake cluster side never load the HTTP stack.
    from brupop.adapters.apiserver_client import ApiserverClient

    return ApiserverClient(
        base_url=settings.apiserver_base_url(),
        node_name=settings.node_name,
        token_path=settings.token_path,
        ca_path=settings.ca_path,
        timeout_seconds=settings.apiserver_client_timeout_seconds,
        drain_timeout_seconds=settings.drain_timeout_seconds,
    )
