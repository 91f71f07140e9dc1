"""The gateway's published contracts: OpenAPI of the REST routes as they really answer, and the
AsyncAPI document of the WebSocket (gateway/asyncapi.py), served at `/asyncapi.json`.

FastAPI's own schema would list no security at all (the routes check the bearer token in their
body, gateway/rest_deps.py) and a 422 body every route with a parameter "may" answer, in a
shape the gateway never sends (gateway/errors.py answers every failure with one JSON body).
This module rewrites the generated schema once: an `HTTPBearer` scheme on every protected
operation, the real error body on every documented 4xx, and 422 only where a JSON body is
validated (docs/protocol.md, "OpenAPI")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from gateway import asyncapi

# Where FastAPIOffline serves the Swagger UI and ReDoc files of its package.
ASSETS_URL = "/static-offline-docs"
_ASSETS = Path(fastapi_offline.__file__).resolve().parent / "static"
_REDOC_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
BEARER = "bearerAuth"
# Operations that take no token: login (a password instead) and the health probe.
PUBLIC = {("post", "/brain/{tenant}/access/{username}"), ("get", "/healthz")}
_STATUS_TEXT = {
    400: "Bad input: a path or query parameter, or a value the service refuses",
    401: "No valid bearer token (missing, malformed, expired or revoked)",
    403: "The token is for another tenant, or the caller may not do this",
    404: "What the path names does not exist (or is not the caller's to see)",
    409: "The resource is not in a state that allows this",
    413: "The body is larger than the gateway takes",
    422: "The JSON body does not match the declared schema",
}


class ErrorDetail(BaseModel):
    """What every REST failure carries (gateway/errors.py); the same fields as the WebSocket's
    `error` frame."""

    model_config = ConfigDict(extra="forbid")

    error_code: int = Field(alias="errorCode", description="HTTP-style status, as the response's")
    error_message: str = Field(alias="errorMessage", description="For people; at most 500 chars")
    reason: str = Field(description="Stable machine string, e.g. `session_not_found`")
    field: str | None = Field(
        default=None, description="Dotted path of the input field at fault, when there is one"
    )


class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    detail: ErrorDetail


def _error_schemas() -> dict[str, Any]:
    schema = ErrorBody.model_json_schema(by_alias=True, ref_template="#/components/schemas/{model}")
    defs = schema.pop("$defs", {})
    return {**defs, "ErrorBody": schema}


def _error_response(status: int) -> dict[str, Any]:
    return {
        "description": _STATUS_TEXT[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


def _statuses(method: str, path: str, op: dict[str, Any]) -> list[int]:
    """The 4xx an operation can answer: the token's, the path's, the body's, the state's."""
    out = [400]
    if (method, path) not in PUBLIC:
        out += [401, 403]
    elif path.startswith("/brain/"):
        out += [401]  # login: a wrong password
    names = [p["name"] for p in op.get("parameters", []) if p.get("in") == "path"]
    if any(n != "tenant" for n in names):
        out.append(404)
    if method in ("post", "patch", "put", "delete") and (method, path) not in PUBLIC:
        out.append(409)
    if "requestBody" in op:
        out += [413, 422]
    return out


def contract(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document as the routes really behave."""
    doc = get_openapi(
        title=app.title,
        version=app.version,
        description=(
            "REST routes of the Vancetope gateway. The WebSocket protocol is described by the "
            "AsyncAPI document at `/asyncapi.json` (docs/protocol.md)."
        ),
        routes=app.routes,
    )
    components = doc.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas.update(_error_schemas())
    components["securitySchemes"] = {
        BEARER: {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": "The token from `POST /brain/{tenant}/access/{username}`",
        }
    }
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            if path.startswith("/brain/") and (method, path) not in PUBLIC:
                op["security"] = [{BEARER: []}]
            responses = op.setdefault("responses", {})
            responses.pop("422", None)
            if path.startswith("/brain/"):
                for status in _statuses(method, path, op):
                    responses[str(status)] = _error_response(status)
    return doc


def _redoc_script() -> bytes:
    """ReDoc as fastapi-offline ships it, less the one thing it would fetch from a CDN at run
    time: the "powered by" logo, pointed at the favicon the gateway serves next to it."""
    script = (_ASSETS / "redoc.standalone.js").read_bytes()
    return script.replace(_REDOC_LOGO, f"{ASSETS_URL}/favicon.png".encode())


def install(app: FastAPI) -> None:
    """Our schema for `/openapi.json` (and so `/docs`), `/redoc` on bundled files only, and
    `/asyncapi.json`. The app is a FastAPIOffline (gateway/app.py) made with `redoc_url=None`."""
    cached: dict[str, Any] = {}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = contract(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - ReDoc",
            redoc_js_url="/redoc-assets/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    @app.get("/redoc-assets/redoc.standalone.js", include_in_schema=False)
    async def redoc_script() -> Response:
        if "redoc" not in cached:
            cached["redoc"] = _redoc_script()
        return Response(
            cached["redoc"],
            media_type="application/javascript",
            headers={"cache-control": "public, max-age=3600"},
        )

    @app.get("/asyncapi.json", include_in_schema=False)
    async def asyncapi_document() -> JSONResponse:
        if "asyncapi" not in cached:
            cached["asyncapi"] = asyncapi.document(app.version)
        return JSONResponse(cached["asyncapi"])
