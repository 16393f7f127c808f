"""`... | python3 -m scripts.release.sizes`: the images' sizes against their goals, from the
JSON figures scripts.release.check prints (one line per image).

An image over its goal fails, except by no more than its libc charset modules (gconv) outgrow
the amd64 image's: arm64's glibc aligns each module to 64 KiB pages, and files of installed
packages are not deleted. That miss is printed with its measured cause.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    figures = [json.loads(line) for line in sys.stdin if line.strip()]
    amd64_gconv = {f["image"].split("-")[0]: f["gconv_mb"] for f in figures
                   if f["image"].endswith("-amd64")}  # fmt: skip
    failed = False
    print(f"{'image':<16}{'size':>10}{'goal':>8}  sbom (python + deb)")
    for f in figures:
        kind = f["image"].split("-")[0]
        excess = max(0.0, f["gconv_mb"] - amd64_gconv.get(kind, f["gconv_mb"]))
        verdict = "ok"
        if f["size_mb"] > f["goal_mb"]:
            if f["size_mb"] - excess <= f["goal_mb"]:
                verdict = (
                    f"MISS by {f['size_mb'] - f['goal_mb']:.1f} MB: libc6's gconv is "
                    f"{f['gconv_mb']} MB here, {excess:.1f} MB more than on amd64"
                )
            else:
                verdict, failed = "OVER the goal", True
        print(f"{f['image']:<16}{f['size_mb']:>7} MB{f['goal_mb']:>5} MB  "
              f"{f['sbom_python']} + {f['sbom_deb']}  {verdict}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
