"""process_service's session event log and the chat feed it serves to session_service."""
