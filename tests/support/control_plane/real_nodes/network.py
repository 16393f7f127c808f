"""The pod network on this machine: one Linux bridge per node (its gateway address is the
node's InternalIP), forwarding between the bridges only (anything from a bridge to another
interface, or back, dropped), kube-apiserver's port closed to every interface but loopback and
the bridges, no masquerade. Undone by `teardown`."""

from __future__ import annotations

import contextlib
import itertools
import json
import shlex
from pathlib import Path

from tests.support.control_plane.real_nodes.host_changes import (
    HostCommandError,
    Journal,
    run,
    set_sysctl,
    write_sysctl,
)
from tests.support.control_plane.real_nodes.layout import (
    BRIDGE_PREFIX,
    CHAIN_PREFIX,
    ClusterLayout,
)

FORWARD_CHAIN = f"{CHAIN_PREFIX}-FORWARD"
INPUT_CHAIN = f"{CHAIN_PREFIX}-INPUT"
BRIDGES = f"{BRIDGE_PREFIX}+"


def setup_bridges(cluster: ClusterLayout, journal: Journal) -> None:
    """Bridges with their gateway addresses, ip_forward on, the forwarding fence up."""
    set_sysctl(journal, "net.ipv4.ip_forward", "1")
    set_sysctl(journal, "net.bridge.bridge-nf-call-iptables", "1")
    for node in cluster.nodes:
        journal.add("bridge", node.bridge)
        run(["ip", "link", "add", node.bridge, "type", "bridge"])
        run(["ip", "addr", "add", f"{node.gateway}/24", "dev", node.bridge])
        run(["ip", "link", "set", node.bridge, "up"])
    journal.add("chain", "filter", FORWARD_CHAIN, "FORWARD")
    run(["iptables", "-w", "-N", FORWARD_CHAIN])
    run(["iptables", "-w", "-A", FORWARD_CHAIN, "-i", BRIDGES, "!", "-o", BRIDGES, "-j", "DROP"])
    run(["iptables", "-w", "-A", FORWARD_CHAIN, "!", "-i", BRIDGES, "-o", BRIDGES, "-j", "DROP"])
    run(["iptables", "-w", "-I", "FORWARD", "1", "-j", FORWARD_CHAIN])


def guard_apiserver(journal: Journal, port: int) -> None:
    """kube-apiserver listens on every address so that pods reach it: close its port to all
    but loopback and the bridges."""
    journal.add("chain", "filter", INPUT_CHAIN, "INPUT")
    run(["iptables", "-w", "-N", INPUT_CHAIN])
    tcp = ["-p", "tcp", "--dport", str(port)]
    run(["iptables", "-w", "-A", INPUT_CHAIN, "-i", "lo", "-j", "RETURN"])
    run(["iptables", "-w", "-A", INPUT_CHAIN, "-i", BRIDGES, "-j", "RETURN"])
    run(["iptables", "-w", "-A", INPUT_CHAIN, *tcp, "-j", "DROP"])
    run(["iptables", "-w", "-I", "INPUT", "1", "-j", INPUT_CHAIN])


def undo(entry: list[str]) -> None:
    """Undo one journal entry; what is already gone is fine."""
    kind = entry[0]
    with contextlib.suppress(HostCommandError, OSError):
        if kind == "sysctl":
            write_sysctl(entry[1], entry[2])
        elif kind == "bridge":
            delete_bridge(entry[1])
        elif kind == "chain":
            delete_chain("iptables", entry[1], entry[2])
        elif kind == "folder":
            remove_empty_tree(Path(entry[1]))


def delete_bridge(name: str) -> None:
    listed = run(["ip", "-o", "link", "show", "master", name], check=False)
    for line in listed.splitlines():
        port = line.split(": ")[1].split("@")[0]
        run(["ip", "link", "del", port], check=False)
    run(["ip", "link", "del", name], check=False)


def delete_chain(tool: str, table: str, chain: str) -> None:
    """Remove every jump to `chain` in its table, then flush and delete it."""
    listing = run([tool, "-w", "-t", table, "-S"], check=False).splitlines()
    for line in listing:
        rule = shlex.split(line)
        if rule[:1] == ["-A"] and jumps_to(rule, chain):
            run([tool, "-w", "-t", table, "-D", *rule[1:]], check=False)
    if f"-N {chain}" in listing:
        run([tool, "-w", "-t", table, "-F", chain], check=False)
        run([tool, "-w", "-t", table, "-X", chain], check=False)


def jumps_to(rule: list[str], chain: str) -> bool:
    return any(
        flag in ("-j", "-g") and target == chain for flag, target in itertools.pairwise(rule)
    )


def remove_empty_tree(path: Path) -> None:
    """rmdir a folder `up` made, deepest first, leaving anything with files in it."""
    if not path.is_dir():
        return
    for child in sorted(path.rglob("*"), key=lambda each: len(each.parts), reverse=True):
        if child.is_dir() and not child.is_symlink():
            with contextlib.suppress(OSError):
                child.rmdir()
    with contextlib.suppress(OSError):
        path.rmdir()


def remove_new_chains(cluster: ClusterLayout, cache_bin: Path) -> None:
    """kube-proxy's own clean-up, then every iptables chain (and jump to it) that was not
    there when `up` began: the kubelets' and kube-proxy's, IPv4 and IPv6."""
    proxy = cache_bin / "kube-proxy"
    if proxy.is_file():
        with contextlib.suppress(HostCommandError):
            run([str(proxy), "--cleanup", "--v=0"], check=False)
    if not cluster.snapshot.is_file():
        return
    before = set(json.loads(cluster.snapshot.read_text()).get("iptables", []))
    for tool in ("iptables", "ip6tables"):
        for table in ("filter", "nat", "mangle", "raw"):
            listing = run([tool, "-w", "-t", table, "-S"], check=False).splitlines()
            for line in listing:
                if line.startswith("-N ") and f"{tool} {table} {line}" not in before:
                    delete_chain(tool, table, line.split()[1])
