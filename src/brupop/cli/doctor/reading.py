"""How doctor reads the cluster: GET a path as JSON, or POST a SubjectAccessReview or a
ConversionReview (through a Service's proxy), through the official client built from the
kubeconfig. Every failure is one ReadRefused with the
HTTP status (None when the API was not reached), so the checks say what it means."""

from __future__ import annotations

import json
from typing import Any, Protocol

import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

JSON = dict[str, Any]


class ReadRefused(Exception):
    """A read that did not give a JSON object; `status` is the HTTP status, if any."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


class ClusterReader(Protocol):
    """What the checks need of the cluster; SubjectAccessReviews are the only writes (a
    ConversionReview is answered by the webhook, and stored nowhere)."""

    def get(self, path: str, query: dict[str, str] | None = None) -> JSON: ...

    def review_access(self, body: JSON) -> JSON: ...

    def get_text(self, path: str) -> str: ...

    def post(self, path: str, body: JSON) -> JSON: ...


class KubernetesReader:
    """A ClusterReader over the official client's raw calls, each bounded by `timeout`."""

    def __init__(self, api_client: ApiClient, timeout: float) -> None:
        self._client = api_client
        self._timeout = timeout

    def get(self, path: str, query: dict[str, str] | None = None) -> JSON:
        return self._call("GET", path, query, None)

    def review_access(self, body: JSON) -> JSON:
        return self._call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", None, body)

    def get_text(self, path: str) -> str:
        return self._send("GET", path, None, None).decode("utf-8", "replace")

    def post(self, path: str, body: JSON) -> JSON:
        return self._call("POST", path, None, body)

    def _call(self, method: str, path: str, query: dict[str, str] | None, body: Any) -> JSON:
        data = self._send(method, path, query, body)
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError):
            raise ReadRefused(None, f"{path}: the answer is not JSON") from None
        if not isinstance(parsed, dict):
            raise ReadRefused(None, f"{path}: the answer is not a JSON object")
        return parsed

    def _send(self, method: str, path: str, query: dict[str, str] | None, body: Any) -> bytes:
        try:
            response = self._client.call_api(
                path,
                method,
                query_params=list((query or {}).items()),
                header_params={"Accept": "application/json", "Content-Type": "application/json"},
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
                _request_timeout=(self._timeout, self._timeout),
            )
            answer = response[0] if isinstance(response, tuple) else response
            data: bytes = answer.data
        except ApiException as error:
            raise ReadRefused(error.status, _message(error)) from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise ReadRefused(
                None, f"cannot reach the Kubernetes API ({type(error).__name__})"
            ) from None
        return data


def _message(error: ApiException) -> str:
    """The Status object's message when the API sent one, else the HTTP reason."""
    try:
        status = json.loads(error.body or b"")
    except (ValueError, RecursionError, TypeError):
        status = None
    if isinstance(status, dict) and isinstance(status.get("message"), str):
        return f"{error.status}: {status['message'][:300]}"
    return f"{error.status} {error.reason}"
