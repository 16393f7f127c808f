"""The real-node parts that need no kubelet: the pause image archive, the node layout, the
iptables clean-up's parsing, the host comparison, the chart values and the command line."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.support.control_plane import cert_manager, probes
from tests.support.control_plane.cli import parser
from tests.support.control_plane.pki import Pki
from tests.support.control_plane.processes import RunFolder, is_ours, reap_exited, wait_exited
from tests.support.control_plane.real_nodes import images, machine_lock
from tests.support.control_plane.real_nodes.host_snapshot import differences
from tests.support.control_plane.real_nodes.layout import ClusterLayout, NodeLayout
from tests.support.control_plane.real_nodes.network import jumps_to
from tests.support.control_plane.real_nodes.oci_archive import ImageSpec, write_archive
from tests.support.polling import wait_until


def archive_of(tmp_path: Path, name: str) -> Path:
    binary = tmp_path / "pause"
    binary.write_bytes(b"\x7fELF pretend")
    target = tmp_path / name
    write_archive(ImageSpec("registry.k8s.io/pause:3.10.2", {"/pause": binary}, ["/pause"]), target)
    return target


def test_the_pause_archive_is_an_oci_layout_naming_its_image_with_blobs_matching_their_digests(
    tmp_path: Path,
) -> None:
    with tarfile.open(archive_of(tmp_path, "pause.tar")) as archive:
        members = {member.name: archive.extractfile(member).read() for member in archive}  # type: ignore[union-attr]
    assert json.loads(members["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    (manifest,) = json.loads(members["index.json"])["manifests"]
    assert manifest["annotations"]["io.containerd.image.name"] == "registry.k8s.io/pause:3.10.2"
    for name, blob in members.items():
        if name.startswith("blobs/sha256/"):
            assert hashlib.sha256(blob).hexdigest() == name.rsplit("/", 1)[1]
    assert f"blobs/sha256/{manifest['digest'].removeprefix('sha256:')}" in members


def test_the_pause_archive_is_the_same_bytes_every_time(tmp_path: Path) -> None:
    first = archive_of(tmp_path, "one.tar").read_bytes()
    assert archive_of(tmp_path, "two.tar").read_bytes() == first


def test_each_node_has_its_own_bridge_subnet_cgroup_root_and_folder(tmp_path: Path) -> None:
    nodes = ClusterLayout(tmp_path, 3).nodes
    assert [node.name for node in nodes] == ["real-node-0", "real-node-1", "real-node-2"]
    assert len({node.bridge for node in nodes}) == len({str(node.subnet) for node in nodes}) == 3
    assert NodeLayout(tmp_path, 1).gateway == "10.245.1.1"
    assert all(len(node.bridge) <= 15 for node in nodes)
    assert len({node.cgroup_root for node in nodes}) == 3


def test_a_rule_jumps_to_a_chain_only_when_its_target_is_that_chain() -> None:
    assert jumps_to(["-A", "INPUT", "-j", "KUBE-FIREWALL"], "KUBE-FIREWALL")
    assert jumps_to(["-A", "FORWARD", "-g", "KUBE-FORWARD"], "KUBE-FORWARD")
    assert not jumps_to(["-A", "INPUT", "-j", "KUBE-FIREWALL-2"], "KUBE-FIREWALL")
    assert not jumps_to(["-A", "KUBE-FIREWALL", "-j", "DROP"], "KUBE-FIREWALL")


def test_the_host_comparison_names_what_was_added_and_what_is_gone() -> None:
    before = {"links": ["lo", "eth0"], "folders": []}
    after = {"links": ["lo", "eth0", "brupopcni0"], "folders": ["/run/containerd"]}
    assert differences(before, after) == [
        "folders: added /run/containerd",
        "links: added brupopcni0",
    ]
    assert differences(after, before) == ["folders: gone /run/containerd", "links: gone brupopcni0"]
    assert differences(before, before) == []


@pytest.mark.parametrize("pull_policy", [False, True])
def test_the_values_name_the_imported_images_and_only_keys_the_chart_knows(
    tmp_path: Path, pull_policy: bool
) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    for image in ("agent", "control"):
        (folder / f"brupop-{image}-1.2.3-amd64.oci.tar").write_bytes(b"")
    (folder / "brupop-agent-1.2.3-arm64.oci.tar").write_bytes(b"")
    schema = tmp_path / "values.schema.json"
    known: dict[str, object] = {"agent_repository": {}, "tag": {}}
    if pull_policy:
        known["pull_policy"] = {}
    schema.write_text(json.dumps({"properties": {"image": {"properties": known}}}))
    values = images.write_values(ClusterLayout(tmp_path, 2), folder, schema)
    image = yaml.safe_load(values.read_text())["image"]
    assert image["agent_repository"] == "localhost/brupop-agent"
    assert image["control_repository"] == "localhost/brupop-control"
    assert image["tag"] == "1.2.3-amd64"
    assert ("pull_policy" in image) is pull_policy
    assert [path.name for path in images.image_archives(folder)] == [
        "brupop-agent-1.2.3-amd64.oci.tar",
        "brupop-control-1.2.3-amd64.oci.tar",
    ]


def test_the_command_line_takes_real_nodes_and_reboot() -> None:
    arguments = parser().parse_args(["up", "somewhere", "--real-nodes", "2"])
    assert arguments.real_nodes == 2
    assert parser().parse_args(["up", "somewhere"]).real_nodes == 0
    assert parser().parse_args(["build", "--real-nodes"]).real_nodes is True
    reboot = parser().parse_args(["reboot", "somewhere", "real-node-1", "--grace", "5"])
    assert (reboot.node, reboot.grace) == ("real-node-1", 5.0)


def test_the_machine_lock_refuses_a_second_cluster_naming_the_first_until_its_release(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "real-nodes.lock"
    first = RunFolder(tmp_path / "first")
    machine_lock.acquire(lock, tmp_path / "first", first)
    try:
        assert not machine_lock.is_free(lock)
        with pytest.raises(machine_lock.MachineBusy, match="first"):
            machine_lock.acquire(lock, tmp_path / "second", RunFolder(tmp_path / "second"))
    finally:
        machine_lock.release(first)
    assert machine_lock.is_free(lock)
    second = RunFolder(tmp_path / "second")
    machine_lock.acquire(lock, tmp_path / "second", second)
    holder = second.read("lock")
    machine_lock.release(second)
    assert holder is not None
    wait_until(lambda: not is_ours(holder), "the lock's holder gone after its release")


FAKE_WEBHOOK = """#!{python}
import http.server, pathlib, sys
flags = dict(argument.lstrip("-").split("=", 1) for argument in sys.argv[1:])
tried = pathlib.Path({tried!r})
if not tried.exists():
    tried.write_text(flags["secure-port"])
    port = flags["secure-port"]
    print(f"cert-manager webhook: listen tcp :{{port}}: bind: address already in use")
    sys.exit(1)

class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()

http.server.HTTPServer(("127.0.0.1", int(flags["healthz-port"])), Health).serve_forever()
"""


def test_a_cert_manager_webhook_whose_port_was_taken_is_started_again_on_other_ports(
    tmp_path: Path,
) -> None:
    tried = tmp_path / "first-port"
    binary = tmp_path / "webhook"
    binary.write_text(FAKE_WEBHOOK.format(python=sys.executable, tried=str(tried)))
    binary.chmod(0o755)
    folder = RunFolder(tmp_path / "run")
    pki = Pki(tmp_path / "pki")
    port = cert_manager.start_webhook(folder, binary, tmp_path / "kubeconfig", pki)
    record = folder.read("cert-manager-webhook")
    assert record is not None
    try:
        assert "address already in use" in folder.log("cert-manager-webhook").read_text()
        assert port != int(tried.read_text())
        assert probes.healthz_answers(int(record.argv[3].split("=")[1]))
    finally:
        os.kill(record.pid, signal.SIGTERM)  # a script: its command line is not the recorded one
        wait_exited(record.pid, 30.0)
        reap_exited()
