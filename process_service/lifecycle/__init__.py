"""process_service's process lifecycle: create and user operations, the session teardown, what a change owes observers, parents and roll-ups, plan mode."""
