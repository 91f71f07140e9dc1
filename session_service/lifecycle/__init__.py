"""A session's status over time: rules, transitions, sweeps, the engine roll-up, archive."""
