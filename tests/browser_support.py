"""Browser fixtures: Debian's Chromium driven by Playwright (never a downloaded browser), one
browser per test session, a fresh context per test, and a screenshot of a failed test's page
under build/screenshots/ (or $VANCE_TEST_SCREENSHOTS)."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    ViewportSize,
    async_playwright,
    expect,
)

from tests.harness import System

CHROMIUM = "/usr/bin/chromium"
# No network but loopback on the test machines: the background services would only fail.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)
# Generous: the machine is shared and the session list polls every 5 s.
expect.set_options(timeout=30_000)
SCREENSHOTS = Path(os.environ.get("VANCE_TEST_SCREENSHOTS", "build/screenshots"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call":
        item.stash[_failed] = report.failed
    return report


_failed = pytest.StashKey[bool]()


@pytest.fixture(scope="session")
async def browser(system: System) -> AsyncIterator[Browser]:
    # Depends on `system` so the browser (and every socket it holds) goes before the system
    # stops: the gateway's shutdown waits for open WebSockets.
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    async with async_playwright() as pw:
        # A plain launch runs Chromium with a fresh, empty user-data-dir that Playwright makes
        # and removes (it refuses a --user-data-dir flag).
        b = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            await b.close()


@pytest.fixture
async def context(browser: Browser, system: System) -> AsyncIterator[BrowserContext]:
    ctx = await browser.new_context(viewport=DESKTOP, base_url=f"http://{system.gateway}")
    ctx.set_default_timeout(30_000)
    try:
        yield ctx
    finally:
        await ctx.close()


@pytest.fixture
async def page(context: BrowserContext, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    p = await context.new_page()
    yield p
    if request.node.stash.get(_failed, False):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)
        await p.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


async def sign_in(page: Page, user: str = "dev", password: str = "dev") -> None:
    await page.goto("/")
    await page.get_by_label("Tenant").fill("default")
    await page.get_by_label("Username").fill(user)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Sessions").wait_for()
