"""Kubernetes JSON schemas for kubeconform, offline: `make lint` validates deploy/k8s with them.

kubeconform downloads its schemas from a site the build machines cannot reach, so they come
from PyPI instead: the `kubernetes-validate` wheel ships the schemas of every recent Kubernetes
release. Its schemas refer to one shared `/api/_definitions.json`; kubeconform resolves such a
reference from the root of the file system, so each reference is rewritten to the absolute
file:// URI of the extracted copy. The result is laid out as kubeconform's schema-location
template expects: <out>/v<version>-standalone-strict/<kind>-<group>-<version>.json.

    python tools/k8s_schemas.py --out .tools/k8s-schemas --k8s 1.31.0
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

WHEEL = "kubernetes-validate==1.37.0"
_REF = '"/api/_definitions.json#'


def fetch_wheel(into: Path) -> Path:
    """The wheel, downloaded once into `into` with pip (nothing installed)."""
    name, version = WHEEL.split("==")
    found = sorted(into.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "-d",
                str(into),
                WHEEL,
            ],
            check=True,
        )
        found = sorted(into.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    return found[0]


def extract(wheel: Path, k8s: str, out: Path) -> int:
    target = (out / f"v{k8s}-standalone-strict").resolve()
    prefix = f"kubernetes_validate/kubernetes-json-schema/v{k8s}-local-strict/"
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if not name.startswith(prefix) or not name.endswith(".json"):
                continue
            text = z.read(name).decode()
            text = text.replace(_REF, f'"{target.as_uri()}/_definitions.json#')
            (target / name[len(prefix) :]).write_text(text)
            count += 1
    if not count:
        raise SystemExit(f"{wheel.name} has no schemas for Kubernetes {k8s}")
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--k8s", default="1.31.0", help="the Kubernetes release to validate for")
    parser.add_argument("--cache", type=Path, default=Path(".tools/src"))
    ns = parser.parse_args()
    count = extract(fetch_wheel(ns.cache), ns.k8s, ns.out)
    print(f"{count} Kubernetes {ns.k8s} schemas in {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
