"""Tenant, project and engine settings, and who may read and write them."""
