"""session_service: tenants, users, projects and sessions."""
