"""Fixtures of the deployment tests: helm, the default render and the committed manifest."""

from __future__ import annotations

import pytest

from tests.deploy.rendering import (
    Helm,
    HelmUnavailableError,
    Rendered,
    committed_manifest,
    fetch_helm,
)


@pytest.fixture(scope="session")
def helm() -> Helm:
    """helm from scripts/fetch-helm; a test that needs it fails (never skips) without it."""
    try:
        return Helm(fetch_helm())
    except HelmUnavailableError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def default_render(helm: Helm) -> str:
    """The chart rendered with its default values."""
    return helm.template()


@pytest.fixture(scope="session")
def manifest() -> Rendered:
    """The committed one-file manifest, parsed."""
    return committed_manifest()
