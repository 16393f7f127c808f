"""The BottlerocketShadow's names and limits, apart from its pydantic models so that the agent
(which reads its shadow without pydantic) and every entrypoint share one source."""

from __future__ import annotations

SHADOW_NAME_PREFIX = "brs-"
API_GROUP = "brupop.bottlerocket.aws"
API_VERSION_V2 = f"{API_GROUP}/v2"
API_VERSION_V1 = f"{API_GROUP}/v1"
KIND = "BottlerocketShadow"
DEFAULT_NAMESPACE = "brupop-bottlerocket-aws"  # brupop's own, unless a pod says otherwise
OPT_IN_LABEL = "bottlerocket.aws/updater-interface-version"
OPT_IN_VALUE = "2.0.0"
CRASH_COUNT_MAX = 2**32 - 1


def shadow_name(node_name: str) -> str:
    """The shadow of node `node_name` is `brs-<node_name>`."""
    return f"{SHADOW_NAME_PREFIX}{node_name}"
