"""The agent's HTTPS client to the brupop apiserver (ShadowStore and NodeOperations)."""

from brupop.adapters.apiserver_client.client import ApiserverClient, apiserver_base_url
from brupop.adapters.apiserver_client.transport import RetrySchedule

__all__ = ["ApiserverClient", "RetrySchedule", "apiserver_base_url"]
