"""The CycloneDX SBOM of an image: its Python packages as cyclonedx-py (the `sbom` extra)
finds them in the venv, and its Debian packages as their status.d records name them.

`check` is the other side: it lists what a root actually holds (every *.dist-info and every
status.d record) and names what the SBOM lacks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PATH_IN_IMAGE = "usr/share/brupop/sbom.cdx.json"
SITE = "opt/brupop/lib/python3.11/site-packages"
STATUS = "var/lib/dpkg/status.d"


def python_components(generator: Path, root: Path, pyproject: Path) -> dict[str, Any]:
    """cyclonedx-py's SBOM of the root's venv. It asks an interpreter for its path, so it is
    given a host venv whose site-packages is the root's (metadata only; any architecture)."""
    with tempfile.TemporaryDirectory() as scratch:
        host_venv = Path(scratch) / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(host_venv)],
                       check=True, timeout=120)  # fmt: skip
        (site,) = (host_venv / "lib").glob("python3*/site-packages")
        site.rmdir()
        site.symlink_to((root / SITE).resolve())
        output = Path(scratch) / "python.cdx.json"
        subprocess.run(
            [str(generator), "environment", "--pyproject", str(pyproject), "--sv", "1.6",
             "--output-reproducible", "-o", str(output), str(host_venv / "bin" / "python")],
            check=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )  # fmt: skip
        document: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
    return document


def debian_packages(root: Path) -> list[dict[str, str]]:
    """Name, version and architecture of each package recorded in the root's status.d."""
    found = []
    for record in sorted((root / STATUS).iterdir()):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", record.read_text(), re.M))
        found.append({key: fields[key.title()] for key in ("package", "version", "architecture")})
    return found


def debian_component(package: dict[str, str]) -> dict[str, Any]:
    """A package as a CycloneDX component with its pkg:deb purl."""
    name, version, arch = package["package"], package["version"], package["architecture"]
    purl = f"pkg:deb/debian/{name}@{version}?arch={arch}&distro=debian-12"
    return {"type": "library", "bom-ref": purl, "name": name, "version": version, "purl": purl}


def merge(python: dict[str, Any], root: Path, image: str, version: str) -> dict[str, Any]:
    """One SBOM for the image: the Python SBOM's components, then the Debian packages'; the
    image itself (a container named brupop-<image>) is the main component."""
    document = dict(python)
    brupop = dict(document["metadata"]["component"])
    brupop.setdefault("purl", f"pkg:pypi/brupop@{version}")
    document["metadata"]["component"] = {
        "type": "container",
        "bom-ref": f"brupop-{image}@{version}",
        "name": f"brupop-{image}",
        "version": version,
    }
    components = [brupop, *document.get("components", [])]
    components += [debian_component(p) for p in debian_packages(root)]
    document["components"] = components
    document["dependencies"] = [
        {"ref": f"brupop-{image}@{version}", "dependsOn": [c["bom-ref"] for c in components]},
        *document.get("dependencies", []),
    ]
    return document


def held_packages(root: Path) -> set[tuple[str, str]]:
    """("pypi" | "deb", name) of every Python distribution and Debian package in the root."""
    held = set()
    for info in (root / SITE).glob("*.dist-info"):
        metadata = (info / "METADATA").read_text(encoding="utf-8")
        name = re.search(r"^Name: (.+)$", metadata, re.M)
        if name:
            held.add(("pypi", _normal(name.group(1))))
    held |= {("deb", p["package"]) for p in debian_packages(root)}
    return held


def listed_packages(document: dict[str, Any]) -> set[tuple[str, str]]:
    """("pypi" | "deb", name) of every component whose purl names one."""
    listed = set()
    for component in document.get("components", []):
        match = re.match(r"pkg:(pypi|deb)/(?:debian/)?([^@?]+)", component.get("purl", ""))
        if match:
            kind, name = match.groups()
            listed.add((kind, _normal(name) if kind == "pypi" else name))
    return listed


def missing(root: Path, document: dict[str, Any]) -> list[str]:
    """Packages the root holds that the SBOM does not list, as "kind:name"."""
    return sorted(f"{k}:{n}" for k, n in held_packages(root) - listed_packages(document))


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
