"""The embedded default: tenant `default`, admin user `dev` (password `dev`), project `demo`.

The admin has a known password, so it is seeded only when `seed_dev_admin` asks for it
(VANCE_SEED_DEV_ADMIN): `make run` does by default, docker-compose.yml and deploy/k8s do not."""

from __future__ import annotations

import logging

from session_service.domain.models import ProjectKind
from session_service.registry.sessions import Sessions
from vance.errors import AlreadyExistsError

logger = logging.getLogger(__name__)

DEFAULT_TENANT = "default"
DEV_USER = "dev"
DEV_PASSWORD = "dev"
DEMO_PROJECT = "demo"


async def seed_defaults(sessions: Sessions, *, dev_admin: bool = True) -> None:
    if dev_admin:
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
