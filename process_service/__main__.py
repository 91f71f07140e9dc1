"""`python -m process_service`."""

from process_service.server import main

main()
