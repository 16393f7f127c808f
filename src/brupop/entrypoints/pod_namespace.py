"""Which namespace brupop runs in: the pod's own service-account namespace, else the default.

Every process reads it this way (the original never hard-codes it).
"""

from __future__ import annotations

import os

from brupop.domain.shadow_names import DEFAULT_NAMESPACE

__all__ = ["DEFAULT_NAMESPACE", "pod_namespace", "service_account_namespace"]
SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"


def service_account_namespace(
    path: str | os.PathLike[str] = SERVICE_ACCOUNT_NAMESPACE_FILE,
) -> str | None:
    """The namespace in the pod's service-account file, or None outside a pod (or when the file
    is not text). Its reader checks it as a DNS label; 1 KiB is far more than one can be."""
    try:
        with open(path, encoding="utf-8") as file:
            return file.read(1024).strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def pod_namespace(path: str | os.PathLike[str] = SERVICE_ACCOUNT_NAMESPACE_FILE) -> str:
    """The pod's namespace, else brupop's default one."""
    return service_account_namespace(path) or DEFAULT_NAMESPACE
