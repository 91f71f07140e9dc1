"""process_service: think processes, inboxes, lanes, chat messages and the session event stream."""
