"""LabelIndex: the in-memory cluster's names and resourceVersions by label, for label selectors.

A list by label selector would otherwise read every object's labels; the controller lists
the opted-in Nodes' versions at every resync, and at 10,000 Nodes reading them all cost more
than the rest of the resync. A Kubernetes apiserver does this selection on its side; this
index keeps the in-memory cluster's share of it proportional to the objects that match.
"""

from __future__ import annotations

from collections.abc import Mapping

Label = tuple[str, str]


class LabelIndex:
    """For each (key, value) label, the names carrying it and their resourceVersions."""

    def __init__(self) -> None:
        self._by_label: dict[Label, dict[str, str | None]] = {}

    def versions(self, label: Label) -> dict[str, str | None]:
        """A copy: the names carrying `label` and their resourceVersions."""
        return dict(self._by_label.get(label, {}))

    def held(self, name: str, labels: Mapping[str, str], version: str | None) -> None:
        """`name` is now at `version` with `labels` (after `dropped` for its old labels)."""
        for label in labels.items():
            self._by_label.setdefault(label, {})[name] = version

    def dropped(self, name: str, labels: Mapping[str, str]) -> None:
        """`name` no longer carries `labels` (it changed or is gone)."""
        for label in labels.items():
            names = self._by_label.get(label)
            if names is not None:
                names.pop(name, None)
                if not names:
                    del self._by_label[label]
