"""The gateway's REST contract (gateway/openapi.py) is honest: protected operations declare the
bearer scheme, every documented 4xx is the body the gateway really sends, no phantom 422; every
operation called without a token answers one of its documented statuses with that body. And
/docs and /redoc work offline: Chromium, with every request off this machine refused, renders
the operations and the Authorize button from files the gateway serves itself."""

from __future__ import annotations

import re
from typing import Any

import httpx
from jsonschema import Draft202012Validator
from playwright.async_api import Page, Route, expect

from tests.harness import System

_METHODS = ("get", "post", "put", "patch", "delete")


async def _openapi(system: System) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        r = await http.get(f"http://{system.gateway}/openapi.json")
        r.raise_for_status()
        doc: dict[str, Any] = r.json()
    return doc


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in _METHODS
    ]


async def test_the_openapi_declares_bearer_auth_and_the_real_error_body(system: System) -> None:
    doc = await _openapi(system)
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": schemes["bearerAuth"]["description"],
    }
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    protected = 0
    for method, path, op in _operations(doc):
        public = (method, path) == ("post", "/brain/{tenant}/access/{username}") or not (
            path.startswith("/brain/")
        )
        if public:
            assert "security" not in op, (method, path)
        else:
            protected += 1
            assert op["security"] == [{"bearerAuth": []}], (method, path)
            assert {"401", "403"} <= set(op["responses"]), (method, path)
        assert ("422" in op["responses"]) == ("requestBody" in op), (method, path)
        for status, response in op["responses"].items():
            if status.startswith("4"):
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path)
    assert protected >= 20


async def test_every_operation_without_a_token_answers_as_documented(system: System) -> None:
    doc = await _openapi(system)
    body_schema = Draft202012Validator(
        {"$ref": "#/components/schemas/ErrorBody", "components": doc["components"]}
    )
    checked = 0
    async with httpx.AsyncClient(base_url=f"http://{system.gateway}") as http:
        for method, path, op in _operations(doc):
            if not path.startswith("/brain/"):
                continue
            url = re.sub(r"\{tenant\}", "default", path)
            url = re.sub(r"\{[^}]+\}", "nobody-here", url)
            kwargs: dict[str, Any] = {"json": {}} if "requestBody" in op else {}
            # Required query parameters given, so what is left to refuse is the token.
            query = {
                p["name"]: "x"
                for p in op.get("parameters", [])
                if p.get("in") == "query" and p.get("required")
            }
            kwargs["params"] = query
            r = await http.request(method.upper(), url, **kwargs)
            assert str(r.status_code) in op["responses"], (method, path, r.status_code, r.text)
            errors = [e.message for e in body_schema.iter_errors(r.json())]
            assert not errors, (method, path, r.json(), errors)
            if "security" in op and "requestBody" not in op:
                assert r.status_code == 401, (method, path, r.text)
            checked += 1
        # A token of this tenant on another tenant's path: the documented 403.
        token = await system.login()
        r = await http.get(
            "/brain/elsewhere/sessions", headers={"Authorization": f"Bearer {token}"}
        )
        assert r.status_code == 403 and r.json()["detail"]["reason"] == "tenant_mismatch"
    assert checked >= 20


async def test_docs_and_redoc_render_offline(page: Page, system: System) -> None:
    refused: list[str] = []

    async def only_this_machine(route: Route) -> None:
        host = route.request.url.split("/")[2].split(":")[0]
        if host in ("127.0.0.1", "localhost"):
            await route.continue_()
        else:
            refused.append(route.request.url)
            await route.abort()

    await page.context.route("**/*", only_this_machine)
    await page.goto("/docs", wait_until="domcontentloaded")
    await expect(page.get_by_role("button", name=re.compile("Authorize"))).to_be_visible()
    await expect(page.get_by_text("/brain/{tenant}/sessions", exact=True).first).to_be_visible()
    await expect(page.locator(".opblock").first).to_be_visible()
    assert await page.locator(".opblock").count() >= 20
    # A protected operation shows its lock; the login does not need one.
    await expect(page.locator(".opblock .authorization__btn").first).to_be_visible()

    await page.goto("/redoc", wait_until="domcontentloaded")
    await expect(page.get_by_text("bearerAuth", exact=False).first).to_be_attached()
    await expect(page.locator("h1").first).to_contain_text("Vancetope gateway")
    assert refused == [], refused
