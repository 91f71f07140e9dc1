"""`python -m tool_service`."""

from tool_service.server import main

main()
