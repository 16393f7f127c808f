"""The docs say what the code does, where they once contradicted it: the README's settings
table and the apiserver agree on APISERVER_INTERNAL_PORT, and safety.md's list of what is not
built does not name the policy fields policy.md documents as built."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.entrypoints.apiserver.settings import load_settings
from brupop.entrypoints.settings_error import SettingsError

DOCS = Path(__file__).resolve().parents[2]


def test_the_readme_says_apiserver_internal_port_is_required_as_the_apiserver_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("APISERVER_INTERNAL_PORT", raising=False)
    monkeypatch.setenv("BRUPOP_CLUSTER", "kubernetes")
    with pytest.raises(SettingsError, match="APISERVER_INTERNAL_PORT"):
        load_settings()

    readme = (DOCS / "README.md").read_text(encoding="utf-8")
    entry = re.search(r"`APISERVER_INTERNAL_PORT` \(([^)]*)\)", readme)
    assert entry is not None
    assert entry[1].startswith("required with `BRUPOP_CLUSTER=kubernetes`"), entry[1]


def _not_built() -> str:
    text = (DOCS / "docs" / "safety.md").read_text(encoding="utf-8")
    section = text[text.index("## What is not built yet") :]
    return re.sub(r"\([^)]*\)", "", section)  # a remark in brackets may name what is built


def test_safety_md_does_not_list_built_policy_fields_as_not_built() -> None:
    fields = {info.alias or name for name, info in UpdatePolicySpec.model_fields.items()}
    not_built = _not_built()

    assert {"maxConcurrent", "windows", "budgets"} <= fields
    assert [field for field in sorted(fields) if f"`{field}`" in not_built] == []
    assert "concurrency limit" not in not_built and "the window" not in not_built
