"""`python -m gateway`."""

from gateway.app import main

main()
