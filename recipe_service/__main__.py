"""`python -m recipe_service`."""

from recipe_service.server import main

main()
