"""Refused gRPC calls carry the standard rich status (`google.rpc.Status` in
`grpc-status-details-bin`): ErrorInfo with the reason on every refusal, BadRequest field
violations for bad input, on unary and streaming methods alike (vance/rpc_calls.py), decoded
here as any gRPC client would, with grpcio-status."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from tests.harness import System
from vance.errors import REASON_KEY, from_rpc_error
from vance.v1 import process_pb2 as ppb
from vance.v1 import process_pb2_grpc, session_pb2_grpc
from vance.v1 import session_pb2 as spb


def _info(status: status_pb2.Status) -> error_details_pb2.ErrorInfo:
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError(f"no ErrorInfo in {status}")


def _violations(status: status_pb2.Status) -> list[error_details_pb2.BadRequest.FieldViolation]:
    for detail in status.details:
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            return list(bad.field_violations)
    return []


async def _refused(call: grpc.aio.Call) -> tuple[grpc.aio.AioRpcError, status_pb2.Status]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    status = await rpc_status.aio.from_call(call)
    assert status is not None, caught.value
    return caught.value, status


async def test_a_refused_call_decodes_to_error_info_with_its_reason(system: System) -> None:
    call = system.sessions.GetSession(
        spb.GetSessionRequest(tenant_id="default", session_id="sess_missing_rich")
    )
    err, status = await _refused(call)
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert status.code == grpc.StatusCode.NOT_FOUND.value[0]
    assert status.message == err.details()
    info = _info(status)
    assert info.reason == "session_not_found"
    assert info.domain == "vance.dev"
    assert dict(info.metadata) == {"sessionId": "sess_missing_rich"}
    # The old trailer stays for clients that read it.
    assert (REASON_KEY, "session_not_found") in tuple(err.trailing_metadata() or ())
    # A service passing the error on keeps all of it.
    again = from_rpc_error(err)
    assert (again.reason, again.metadata) == (
        "session_not_found",
        {"sessionId": "sess_missing_rich"},
    )


async def test_bad_input_names_the_field_in_a_bad_request(system: System) -> None:
    call = system.sessions.CreateSession(spb.CreateSessionRequest(tenant_id="default"))
    err, status = await _refused(call)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _info(status).reason == "project_required"
    [violation] = _violations(status)
    assert (violation.field, violation.reason) == ("project_id", "project_required")
    assert violation.description == "projectId is required"


async def test_a_call_without_credentials_is_refused_with_error_info(system: System) -> None:
    async with grpc.aio.insecure_channel(system.config.address("session_service")) as ch:
        call = session_pb2_grpc.SessionServiceStub(ch).GetSession(
            spb.GetSessionRequest(tenant_id="default", session_id="x")
        )
        err, status = await _refused(call)
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _info(status).reason == "token_required"


async def test_a_streaming_method_maps_its_errors_like_a_unary_one(system: System) -> None:
    """SubscribeSessionBatches had no mapping of its own: its refusal came out as UNKNOWN."""
    stub = process_pb2_grpc.ProcessServiceStub(system.channel("process_service"))
    call = stub.SubscribeSessionBatches(ppb.SubscribeSessionRequest())
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = await rpc_status.aio.from_call(call)
    assert status is not None
    assert _info(status).domain == "vance.dev"
    assert _violations(status), status
