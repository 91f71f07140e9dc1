"""Which connection holds a session: the bind compare-and-set, heartbeats and bind leases."""
