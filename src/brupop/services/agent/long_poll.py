"""The agent's long poll of its shadow, in a helper thread so that a stop is seen at once.

The apiserver holds the poll until the shadow changes or `seconds` pass; a SIGTERM meanwhile
must not wait for it, so the loop's thread only watches the stop flag and the helper.
"""

from __future__ import annotations

import threading

from brupop.domain.host.agent_shadow import AgentShadow
from brupop.services.agent.stop import POLL_SECONDS, StopFlag

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from brupop.ports.agent.shadow_store import ShadowStore


def await_change(
    store: ShadowStore, resource_version: str | None, seconds: float, stop: StopFlag
) -> AgentShadow | Exception | None:
    """The shadow once it changed from `resource_version` (or `seconds` passed), the error the
    poll met, or None when a stop cut it short."""
    if stop.requested:
        return None
    answer: list[AgentShadow | Exception | None] = []

    def poll() -> None:
        try:
            answer.append(store.wait_for_change(resource_version, seconds))
        except Exception as error:  # handed to the loop's thread, which decides
            answer.append(error)

    waiter = threading.Thread(target=poll, name="shadow-long-poll", daemon=True)
    waiter.start()
    while waiter.is_alive() and not stop.requested:
        waiter.join(POLL_SECONDS)
    if stop.requested or not answer:
        return None
    return answer[0]
