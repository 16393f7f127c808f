"""kwok's Node Lease duration: a kubelet's 40 s unless the control plane's folder names another."""

from __future__ import annotations

from pathlib import Path

from tests.support.control_plane.components import node_lease_seconds


def test_kwok_renews_node_leases_like_a_kubelet_by_default(tmp_path: Path) -> None:
    assert node_lease_seconds(tmp_path) == 40


def test_the_folder_can_name_a_longer_node_lease_for_a_large_fleet(tmp_path: Path) -> None:
    (tmp_path / "kwok-node-lease-seconds").write_text("3600\n")
    assert node_lease_seconds(tmp_path) == 3600


def test_a_lease_file_that_is_not_a_sane_number_of_seconds_is_ignored(tmp_path: Path) -> None:
    for text in ("soon", "-5", "3", "999999"):
        (tmp_path / "kwok-node-lease-seconds").write_text(text)
        assert node_lease_seconds(tmp_path) == 40
