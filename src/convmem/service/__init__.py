"""The HTTP service and the memory page: ``create_app`` builds the app, ``serve`` runs it."""

from convmem.service.app import ServiceSettings, create_app

__all__ = ["ServiceSettings", "create_app"]
