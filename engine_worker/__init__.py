"""engine_worker: a stateless pool process that runs think engines on lane turns."""
