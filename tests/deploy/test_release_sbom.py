"""The image SBOM's two halves and its check (scripts/release/sbom.py), over a small root made
here: the merged SBOM names every .deb of the root by its pkg:deb purl and keeps every Python
component; the check names a package the root holds and the SBOM lacks. scripts/test-image
runs the same check over every built image. Also: the .deb list follows apt's first
alternatives and virtual packages' providers, and leaves out the package tooling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.release import debian, sbom


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for name, version in (("libc6", "2.36-9+deb12u14"), ("libssl3", "3.0.22-1~deb12u2")):
        record = root / sbom.STATUS / name
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(f"Package: {name}\nVersion: {version}\nArchitecture: arm64\n")
    for name in ("pydantic", "typing_extensions"):
        info = root / sbom.SITE / f"{name}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    return root


def _python_sbom(*names: str) -> dict[str, Any]:
    return {
        "bomFormat": "CycloneDX",
        "metadata": {"component": {"bom-ref": "root-component", "name": "brupop"}},
        "components": [{"bom-ref": n, "name": n, "purl": f"pkg:pypi/{n}@1.0"} for n in names],
    }


def test_the_merged_sbom_lists_every_deb_and_python_package_of_the_root(tmp_path: Path) -> None:
    root = _root(tmp_path)
    document = sbom.merge(_python_sbom("pydantic", "typing-extensions"), root, "agent", "0.1.0")

    assert sbom.missing(root, document) == []
    purls = [c["purl"] for c in document["components"]]
    assert "pkg:deb/debian/libc6@2.36-9+deb12u14?arch=arm64&distro=debian-12" in purls
    assert "pkg:pypi/brupop@0.1.0" in purls
    assert document["metadata"]["component"]["type"] == "container"
    assert document["metadata"]["component"]["name"] == "brupop-agent"


def test_the_check_names_what_the_sbom_lacks(tmp_path: Path) -> None:
    root = _root(tmp_path)
    document = sbom.merge(_python_sbom("pydantic"), root, "agent", "0.1.0")
    document["components"] = [c for c in document["components"] if c["name"] != "libssl3"]

    assert sbom.missing(root, document) == ["deb:libssl3", "pypi:typing-extensions"]


APT_CACHE_DEPENDS = """\
libpython3.11-stdlib
  Depends: libc6
 |Depends: media-types
  Depends: mime-support
  Depends: libssl3
ca-certificates
  Depends: openssl
  Depends: <debconf-2.0>
    debconf
    cdebconf
  PreDepends: zlib1g
"""


def test_the_deb_list_takes_first_alternatives_and_providers() -> None:
    found = debian._dependencies(APT_CACHE_DEPENDS)

    assert found == {"libc6", "media-types", "libssl3", "openssl", "debconf", "zlib1g"}


def test_package_tooling_is_left_out_of_every_image() -> None:
    for tool in ("dpkg", "debconf", "perl-base", "openssl", "tar"):
        assert tool in debian.LEFT_OUT
    assert not set(debian.ROOTS) & set(debian.LEFT_OUT)
