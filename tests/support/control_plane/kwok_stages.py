"""kwok's stages (what happens to a Node or Pod it manages, and when).

The `kwok` binary has none built in: without `--config` it exits with "no stages found".
`build` collects the set that kwok's own `kustomize/stage/fast` kustomization names (node
initialize, heartbeat with lease, pod ready, complete and delete) from the kwok module
source, into one multi-document file in the cache.
"""

from __future__ import annotations

from pathlib import Path

FAST_SET = Path("kustomize/stage/fast")


def resources(kustomization_dir: Path) -> list[Path]:
    """The `resources:` entries of a plain kustomization.yaml (one `- name` per line)."""
    text = (kustomization_dir / "kustomization.yaml").read_text()
    listed: list[Path] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("resources:"):
            inside = True
        elif inside and line.startswith("- "):
            listed.append((kustomization_dir / line[2:].strip()).resolve())
        elif inside and line and not line.startswith((" ", "#")):
            inside = False
    return listed


def stage_files(source: Path) -> list[Path]:
    """Every stage YAML file the fast set reaches, folders expanded, in kustomize's order."""
    files: list[Path] = []
    pending = resources(source / FAST_SET)
    while pending:
        entry = pending.pop(0)
        if entry.is_dir():
            pending[:0] = resources(entry)
        else:
            files.append(entry)
    return files


def write_stages(source: Path, target: Path) -> int:
    """Concatenate the fast stages from the kwok module at `source` into `target`."""
    files = stage_files(source)
    documents = [file.read_text().strip() + "\n" for file in files]
    partial = target.with_name(target.name + ".partial")
    partial.write_text("---\n".join(documents))
    partial.replace(target)
    return len(files)
