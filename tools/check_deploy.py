"""`make lint`'s check of the deployment files, without Docker: every COPY source of the
Dockerfile exists and is inside the build context (not excluded by .dockerignore, matched the
way Docker does, via the Docker SDK's exclude_paths), and docker-compose.yml keeps its promises
(images pinned to a release, both secrets required, a healthcheck on every service).

    python tools/check_deploy.py [--root DIR]      exit 1 with one line per problem
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import yaml
from docker.utils.build import exclude_paths

SECRETS = ("VANCE_JWT_SECRET", "VANCE_SERVICE_SECRET")
# A tag that names a release (7.0.16, 3.11.11-slim-bookworm, ${VANCE_IMAGE_TAG:-0.1.0}): at
# least major.minor, not `latest`, not a bare major.
_PINNED = re.compile(r":(\$\{[A-Z_]+:-)?\d+\.\d+[\w.-]*\}?$")


def _instructions(dockerfile: str) -> list[tuple[str, list[str]]]:
    """(instruction, arguments) per logical line: continuations joined, comments dropped."""
    out: list[tuple[str, list[str]]] = []
    pending = ""
    for raw in dockerfile.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        word, _, rest = line.partition(" ")
        out.append((word.upper(), shlex.split(rest)))
    return out


def copy_sources(dockerfile: str) -> list[str]:
    """The build-context sources of COPY and ADD (not those `--from` another stage)."""
    sources: list[str] = []
    for word, args in _instructions(dockerfile):
        if word not in ("COPY", "ADD"):
            continue
        if any(a.startswith("--from") for a in args):
            continue
        paths = [a for a in args if not a.startswith("--")]
        sources.extend(p.rstrip("/") or "." for p in paths[:-1])
    return sources


def check_dockerfile(root: Path) -> list[str]:
    problems: list[str] = []
    ignore = root / ".dockerignore"
    patterns = [
        p.strip()
        for p in (ignore.read_text().splitlines() if ignore.exists() else [])
        if p.strip() and not p.strip().startswith("#")
    ]
    included = exclude_paths(str(root), patterns)  # what the build context holds
    for src in copy_sources((root / "Dockerfile").read_text()):
        path = root / src
        if not any(path.parent.glob(path.name)):
            problems.append(f"Dockerfile: COPY source {src} does not exist")
            continue
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
        rel = {str(f.relative_to(root)) for f in files}
        if not rel & included:
            problems.append(f"Dockerfile: COPY source {src} is excluded by .dockerignore")
    return problems


def check_compose(root: Path) -> list[str]:
    problems: list[str] = []
    text = (root / "docker-compose.yml").read_text()
    compose: dict[str, Any] = yaml.safe_load(text)
    for secret in SECRETS:
        if not re.search(rf"{secret}: \$\{{{secret}:\?", text):
            problems.append(f"docker-compose.yml: {secret} must be required (${{{secret}:?...}})")
    for name, service in compose["services"].items():
        image = str(service.get("image", ""))
        if not _PINNED.search(image):
            problems.append(f"docker-compose.yml: {name}: image {image!r} is not pinned")
        if "healthcheck" not in service:
            problems.append(f"docker-compose.yml: {name} has no healthcheck")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    ns = parser.parse_args(argv)
    problems = check_dockerfile(ns.root) + check_compose(ns.root)
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
