"""`make protos`: generates vance/v1 from protos/ (Python, gRPC, and type stubs for both); --check diffs."""

from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
OUT_PACKAGE = Path("vance") / "v1"


def _plugin(name: str) -> Path:
    """mypy-protobuf's protoc plugins are console scripts beside this interpreter."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise SystemExit(f"{name} not found next to {sys.executable}; run `make setup`")
    return path


def generate(out_root: Path) -> list[Path]:
    sources = sorted(PROTOS.glob("vance/v1/*.proto"))
    include = str(resources.files("grpc_tools") / "_proto")
    args = [
        "protoc",
        f"-I{PROTOS}",
        f"-I{include}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--mypy_grpc_out={out_root}",
        *[str(s) for s in sources],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    pkg = out_root / OUT_PACKAGE
    (pkg / "__init__.py").write_text('"""Generated from protos/vance/v1 by `make protos`."""\n')
    return sorted(p for p in pkg.iterdir() if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if vance/v1 is stale")
    ns = parser.parse_args(argv)
    target = ROOT / OUT_PACKAGE
    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        if ns.check:
            stale = [
                f.name
                for f in fresh
                if not (target / f.name).exists() or not filecmp.cmp(f, target / f.name, False)
            ]
            extra = {p.name for p in target.glob("*.py*")} - {f.name for f in fresh}
            if stale or extra:
                print(
                    f"generated protos are stale: {sorted(stale) + sorted(extra)};"
                    " run `make protos`",
                    file=sys.stderr,
                )
                return 1
            return 0
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for f in fresh:
            shutil.copy(f, target / f.name)
    print(f"generated {len(fresh)} files into {OUT_PACKAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
