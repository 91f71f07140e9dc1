"""Eddie's home: hub projects, the hub RPCs, the user's inbox."""
