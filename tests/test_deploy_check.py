"""tools/check_deploy.py, the build-context check `make lint` runs: it passes on this
repository and names the problem when a COPY source is missing or excluded by .dockerignore
(the bug it was written for: `docs` copied by the Dockerfile and excluded from the context)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_deploy", ROOT / "tools/check_deploy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _context(tmp: Path, ignore: str, dockerfile: str) -> Path:
    (tmp / "docs").mkdir()
    (tmp / "docs" / "a.md").write_text("# a\n")
    (tmp / "app").mkdir()
    (tmp / "app" / "main.py").write_text("")
    (tmp / ".dockerignore").write_text(ignore)
    (tmp / "Dockerfile").write_text(dockerfile)
    return tmp


DOCKERFILE = """FROM python:3.11.11-slim-bookworm AS base
COPY app ./app
COPY --chown=1000:1000 docs \\
     /opt/docs
COPY --from=base /app /elsewhere
"""


def test_this_repository_passes() -> None:
    checker = _checker()
    assert checker.check_dockerfile(ROOT) == []
    assert checker.check_compose(ROOT) == []


def test_an_excluded_copy_source_is_named(tmp_path: Path) -> None:
    checker = _checker()
    root = _context(tmp_path, "docs\n**/__pycache__\n", DOCKERFILE)
    assert checker.check_dockerfile(root) == [
        "Dockerfile: COPY source docs is excluded by .dockerignore"
    ]
    # An exception (!) brings it back, as with Docker.
    (root / ".dockerignore").write_text("docs\n!docs/a.md\n")
    assert checker.check_dockerfile(root) == []


def test_a_missing_copy_source_is_named(tmp_path: Path) -> None:
    checker = _checker()
    root = _context(tmp_path, "", DOCKERFILE + "COPY protos ./protos\n")
    assert checker.check_dockerfile(root) == ["Dockerfile: COPY source protos does not exist"]
