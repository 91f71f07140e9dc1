"""The embedded default: tenant `default`, admin user `dev` (password `dev`), project `demo`."""

from __future__ import annotations

import logging

from session_service.models import ProjectKind
from session_service.sessions import Sessions
from vance.errors import AlreadyExistsError

logger = logging.getLogger(__name__)

DEFAULT_TENANT = "default"
DEV_USER = "dev"
DEV_PASSWORD = "dev"
DEMO_PROJECT = "demo"


async def seed_defaults(sessions: Sessions) -> None:
    try:
        await sessions.create_user(DEFAULT_TENANT, DEV_USER, DEV_PASSWORD, ["admin"])
        logger.info("seeded user %s/%s", DEFAULT_TENANT, DEV_USER)
    except AlreadyExistsError:
        pass
    try:
        await sessions.create_project(DEFAULT_TENANT, DEMO_PROJECT, "Demo", ProjectKind.NORMAL)
        logger.info("seeded project %s/%s", DEFAULT_TENANT, DEMO_PROJECT)
    except AlreadyExistsError:
        pass
