"""Users, projects and sessions: creating them and looking them up; the dev seed."""
