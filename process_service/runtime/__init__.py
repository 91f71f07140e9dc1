"""process_service's runtime: steering, lanes, dispatch to workers, the worker stream, turns and their commit, the outbox."""
