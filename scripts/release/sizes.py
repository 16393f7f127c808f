"""`... | python3 -m scripts.release.sizes`: the images' sizes against their goals, from the
JSON figures scripts.release.check prints (one line per image). An image over its goal fails."""

from __future__ import annotations

import json
import sys


def main() -> int:
    figures = [json.loads(line) for line in sys.stdin if line.strip()]
    failed = False
    print(f"{'image':<16}{'size':>10}{'goal':>8}  sbom (python + deb)")
    for f in figures:
        verdict = "ok"
        if f["size_mb"] > f["goal_mb"]:
            verdict, failed = f"OVER the goal by {f['size_mb'] - f['goal_mb']:.1f} MB", True
        print(f"{f['image']:<16}{f['size_mb']:>7} MB{f['goal_mb']:>5} MB  "
              f"{f['sbom_python']} + {f['sbom_deb']}  {verdict}")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
