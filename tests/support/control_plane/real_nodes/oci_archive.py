"""A one-layer OCI image archive (the layout `ctr images import` reads) from files on this
machine, byte-reproducible: the pause image that every pod sandbox runs, without a registry."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ImageSpec:
    """What goes into the image: files (path in image -> file here), entrypoint and user."""

    name: str
    files: dict[str, Path]
    entrypoint: list[str]
    user: str = ""


def write_archive(spec: ImageSpec, target: Path) -> None:
    """Write the archive to `target` (through a temporary name, so a crash leaves none)."""
    layer = layer_tar(spec.files)
    config = canonical(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": spec.entrypoint, "User": spec.user},
            "rootfs": {"type": "layers", "diff_ids": [digest(layer)]},
        }
    )
    manifest = canonical(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor("application/vnd.oci.image.config.v1+json", config),
            "layers": [descriptor("application/vnd.oci.image.layer.v1.tar", layer)],
        }
    )
    reference = descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
    reference["annotations"] = {
        "io.containerd.image.name": spec.name,
        "org.opencontainers.image.ref.name": spec.name,
    }
    index = canonical({"schemaVersion": 2, "manifests": [reference]})
    entries = {"oci-layout": canonical({"imageLayoutVersion": "1.0.0"}), "index.json": index}
    for blob in (layer, config, manifest):
        entries[f"blobs/sha256/{digest(blob).removeprefix('sha256:')}"] = blob
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(tar_of(entries))
    partial.replace(target)


def layer_tar(files: dict[str, Path]) -> bytes:
    return tar_of({inside.lstrip("/"): source.read_bytes() for inside, source in files.items()})


def tar_of(entries: dict[str, bytes]) -> bytes:
    """A tar of regular files, mode 0755, owned by root, time 0: the same bytes every time."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name in sorted(entries):
            info = tarfile.TarInfo(name)
            info.size = len(entries[name])
            info.mode = 0o755
            archive.addfile(info, io.BytesIO(entries[name]))
    return buffer.getvalue()


def canonical(document: object) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def digest(blob: bytes) -> str:
    return "sha256:" + hashlib.sha256(blob).hexdigest()


def descriptor(media_type: str, blob: bytes) -> dict[str, object]:
    return {"mediaType": media_type, "digest": digest(blob), "size": len(blob)}
