"""The project's images in the real nodes: every amd64 OCI archive `scripts/build-images`
wrote (imported into each node's containerd, nothing pulled), and DIR/real-nodes-values.yaml,
the chart values that point at them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from tests.support.control_plane.real_nodes.layout import ClusterLayout

REPOSITORY = Path(__file__).resolve().parents[4]
IMAGES = REPOSITORY / "dist" / "images"
SCHEMA = REPOSITORY / "deploy" / "charts" / "bottlerocket-update-operator" / "values.schema.json"
ARCHIVE = re.compile(r"brupop-(agent|control)-(?P<version>[^-]+(?:-[^-]+)*?)-amd64\.oci\.tar")


def image_archives(folder: Path = IMAGES) -> list[Path]:
    return sorted(
        path for path in folder.glob("brupop-*-amd64.oci.tar") if ARCHIVE.fullmatch(path.name)
    )


def image_tag(folder: Path = IMAGES) -> str:
    """<version>-amd64, as scripts/build-images tags the images."""
    for path in image_archives(folder):
        matched = ARCHIVE.fullmatch(path.name)
        if matched:
            return f"{matched['version']}-amd64"
    return ""


def chart_has_pull_policy(schema: Path = SCHEMA) -> bool:
    if not schema.is_file():
        return False
    image = json.loads(schema.read_text()).get("properties", {}).get("image", {})
    return "pull_policy" in image.get("properties", {})


def write_values(cluster: ClusterLayout, folder: Path = IMAGES, schema: Path = SCHEMA) -> Path:
    """Values naming the imported images; only keys the chart knows."""
    image: dict[str, str] = {
        "agent_repository": "localhost/brupop-agent",
        "control_repository": "localhost/brupop-control",
        "tag": image_tag(folder),
    }
    if chart_has_pull_policy(schema):
        image["pull_policy"] = "Never"
    cluster.values.write_text(yaml.safe_dump({"image": image}, sort_keys=False))
    return cluster.values
