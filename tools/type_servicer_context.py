"""Types the `context` parameter of every gRPC servicer method as `grpc.aio.ServicerContext`.

A servicer method is a method of a class whose parameters are `(self, request, context)`. Its
`context: Any` (or an unannotated `context`) becomes `grpc.aio.ServicerContext[Req, Resp]`,
with Req the request's type (the item type of an `AsyncIterator[...]` request stream) and Resp
the return type (the item type of an `AsyncIterator[...]` reply stream). `import grpc` is added
where missing (and `from __future__ import annotations`, since the class is not
subscriptable at run time), then ruff sorts the imports and drops an `Any` no longer used. Decorator
wrappers that take any method (vance/errors.py) are plain functions, not methods, and stay as
they are. Safe to run again: a typed context is left alone, so it can follow a merge of
branches that added servicer methods.

    python tools/type_servicer_context.py [paths...]   (default: the service packages)"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = (
    "vance",
    "session_service",
    "process_service",
    "engine_worker",
    "tool_service",
    "recipe_service",
    "gateway",
)
SKIP = ("vance/v1/",)
STREAM = "AsyncIterator"


def _item(node: ast.expr | None, source: str) -> str:
    """The annotation's text; for `AsyncIterator[X]` (a stream), X's."""
    if node is None:
        return "Any"
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name | ast.Attribute)
        and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == STREAM
    ):
        node = node.slice
    text = ast.get_source_segment(source, node)
    return text or "Any"


def _untyped(node: ast.arg) -> bool:
    ann = node.annotation
    return ann is None or (isinstance(ann, ast.Name) and ann.id == "Any")


def edits(source: str) -> list[tuple[ast.arg, str]]:
    out: list[tuple[ast.arg, str]] = []
    for cls in ast.walk(ast.parse(source)):
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.AsyncFunctionDef | ast.FunctionDef):
                continue
            args = fn.args.args
            if [a.arg for a in args] != ["self", "request", "context"] or not _untyped(args[2]):
                continue
            request = _item(args[1].annotation, source)
            reply = _item(fn.returns, source)
            out.append((args[2], f"context: grpc.aio.ServicerContext[{request}, {reply}]"))
    return out


def _offset(lines: list[str], line: int, col: int) -> int:
    return sum(len(x) for x in lines[: line - 1]) + len(lines[line - 1].encode()[:col].decode())


def rewrite(path: Path) -> bool:
    source = path.read_text()
    found = edits(source)
    if not found:
        return False
    lines = source.splitlines(keepends=True)
    for arg, text in sorted(found, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        start = _offset(lines, arg.lineno, arg.col_offset)
        end = _offset(lines, arg.end_lineno or arg.lineno, arg.end_col_offset or 0)
        source = source[:start] + text + source[end:]
    tree = ast.parse(source)
    if not any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body):
        # grpc.aio.ServicerContext is not subscriptable at run time: annotations stay strings.
        first = tree.body[0]
        at = first.end_lineno if isinstance(first, ast.Expr) else 0
        body = source.splitlines(keepends=True)
        body.insert(at or 0, "\nfrom __future__ import annotations\n")
        source = "".join(body)
        tree = ast.parse(source)
    imported = any(
        isinstance(n, ast.Import) and any(a.name == "grpc" for a in n.names) for n in tree.body
    )
    if not imported:
        # After the module docstring and `from __future__` imports; ruff puts it in order.
        at = 0
        for node in tree.body:
            if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)) or (
                isinstance(node, ast.ImportFrom) and node.module == "__future__"
            ):
                at = node.end_lineno or at
        body = source.splitlines(keepends=True)
        body.insert(at, "\nimport grpc\n")
        source = "".join(body)
    path.write_text(source)
    return True


def _shown(path: Path) -> str:
    """The path from the repository's root (as given when outside it)."""
    full = path.resolve()
    return full.relative_to(ROOT).as_posix() if full.is_relative_to(ROOT) else str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    ns = parser.parse_args(argv)
    roots = ns.paths or [ROOT / p for p in PACKAGES]
    files = [
        f
        for r in roots
        for f in (sorted(r.rglob("*.py")) if r.is_dir() else [r])
        if not _shown(f).startswith(SKIP)
    ]
    changed = [f for f in files if rewrite(f)]
    if changed:
        ruff = str(Path(sys.executable).parent / "ruff")
        names = [str(f) for f in changed]
        subprocess.run(
            [ruff, "check", "--fix", "--quiet", "--select", "I,F401", *names], check=False
        )
        subprocess.run([ruff, "format", "--quiet", *names], check=False)
    for f in changed:
        print(f"typed servicer contexts in {_shown(f)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
