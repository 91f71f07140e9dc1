"""Test and benchmark support shipped with the package: the scripted model server."""
