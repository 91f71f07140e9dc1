"""The records session_service passes around, and creating users, projects and sessions."""
