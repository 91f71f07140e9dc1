"""The public package is what a user token may call (vance/policy.py) and nothing more: every
vance.v1 method has a rule, every vance.internal.v1 method has none (services only). A new RPC
put in the wrong package fails here (docs/protocol.md "Packages")."""

from __future__ import annotations

from google.protobuf.descriptor import FileDescriptor

from vance.internal.v1 import (
    knowledge_internal_pb2,
    process_internal_pb2,
    recipe_internal_pb2,
    session_internal_pb2,
    tokens_internal_pb2,
    tool_pb2,
    worker_pb2,
)
from vance.policy import RULES
from vance.v1 import knowledge_pb2, process_pb2, recipe_pb2, session_pb2, tokens_pb2, work_pb2

PUBLIC = (knowledge_pb2, process_pb2, recipe_pb2, session_pb2, tokens_pb2, work_pb2)
INTERNAL = (
    knowledge_internal_pb2,
    process_internal_pb2,
    recipe_internal_pb2,
    session_internal_pb2,
    tokens_internal_pb2,
    tool_pb2,
    worker_pb2,
)


def _methods(files: tuple[FileDescriptor, ...]) -> set[str]:
    return {
        f"/{service.full_name}/{method.name}"
        for f in files
        for service in f.services_by_name.values()
        for method in service.methods
    }


def test_every_public_method_is_callable_with_a_user_token() -> None:
    public = _methods(tuple(m.DESCRIPTOR for m in PUBLIC))
    assert public, "no public methods found"
    assert public - set(RULES) == set()


def test_no_internal_method_is_callable_with_a_user_token() -> None:
    internal = _methods(tuple(m.DESCRIPTOR for m in INTERNAL))
    assert all(path.startswith("/vance.internal.v1.") for path in internal)
    assert internal & set(RULES) == set()
    # Every rule names a method that exists: a moved RPC cannot leave a dead rule behind.
    assert set(RULES) <= _methods(tuple(m.DESCRIPTOR for m in PUBLIC))
