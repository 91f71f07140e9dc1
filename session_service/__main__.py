"""`python -m session_service`."""

from session_service.server import main

main()
