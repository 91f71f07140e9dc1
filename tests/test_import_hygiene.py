"""What importing the project does: nothing to the environment, no test code, no circles."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVERS = [
    "session_service.server",
    "process_service.server",
    "tool_service.server",
    "recipe_service.server",
    "gateway.app",
    "engine_worker.worker",
    "vance.llm",
    "vance.cli",
]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_importing_vance_leaves_the_environment_alone_and_an_entry_point_sets_it() -> None:
    done = _python(
        "import os, vance, vance.config, vance.server\n"
        "print(sorted(k for k in os.environ if k.startswith('GRPC_')))\n"
        "from vance.grpc_env import apply_grpc_env\n"
        "apply_grpc_env()\n"
        "print(os.environ['GRPC_EXPERIMENTS'])\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "-event_engine_client,-event_engine_listener"]


def test_no_production_module_imports_the_scripted_model() -> None:
    imports = "\n".join(f"import {name}" for name in SERVERS)
    done = _python(
        f"import sys\n{imports}\n"
        "print(sorted(m for m in sys.modules if m.startswith('vance.testing')))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_import_circle_check_passes_here_and_finds_a_planted_circle(tmp_path: Path) -> None:
    clean = subprocess.run(
        [sys.executable, "tools/import_cycles.py"], cwd=ROOT, capture_output=True, text=True
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    pkg = tmp_path / "gateway"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from gateway.b import x\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nimport gateway.c\nx = 1\n")
    (pkg / "c.py").write_text("from . import a\n")
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gateway.a\n"
    )
    planted = subprocess.run(
        [sys.executable, str(ROOT / "tools/import_cycles.py"), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert planted.returncode == 1
    assert "gateway.a -> gateway.b -> gateway.c -> gateway.a" in planted.stdout
    assert "gateway.d" not in planted.stdout  # a TYPE_CHECKING import runs nothing
