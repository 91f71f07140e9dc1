"""REST route for the engine catalog: tenant admins reload it without a restart.

The catalog is one per recipe_service process, so a reload by any tenant's admin takes effect
for every tenant. A file that does not parse is refused (409 `catalog_invalid`, with the
parser's message) and the old catalog stays active; reloading an unchanged file is a no-op.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from gateway.rest_deps import PathId, admin, clients
from vance.domain import HUB_ONLY_ENGINES
from vance.v1 import process_pb2 as ppb
from vance.v1 import recipe_pb2 as rpb

router = APIRouter(tags=["catalog"])


@router.post("/brain/{tenant}/admin/catalog/engines/reload")
async def reload_engine_catalog(request: Request, tenant: PathId) -> dict[str, Any]:
    """Re-reads the engine catalog file; entries for engines no worker runs are marked."""
    await admin(request, tenant)
    c = clients(request)
    workers = await c.processes.ListWorkers(ppb.ListWorkersRequest())
    running = sorted({e for w in workers.workers for e in w.engines})
    spawnable = [e for e in running if e not in HUB_ONLY_ENGINES]
    catalog = await c.recipes.ReloadEngines(rpb.ListEnginesRequest(available_engines=spawnable))
    return {
        "engines": [
            {
                "name": e.name,
                "purpose": e.purpose,
                "whenToUse": e.when_to_use,
                "notFor": e.not_for,
                "available": not e.unavailable,
            }
            for e in catalog.engines
        ],
        "runningEngines": running,
    }
