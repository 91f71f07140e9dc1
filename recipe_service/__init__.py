"""recipe_service: recipes (bundled, tenant, project), defaulting and snapshots."""
