"""The collections of sessions, users, projects and replica leases: the only modules that know
their field names and update operators (docs/architecture.md, "session_service's packages")."""
