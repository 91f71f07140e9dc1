"""Who may act: owner-or-admin checks, password hashes, revoked login tokens."""
