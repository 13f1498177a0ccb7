"""The admin listener: health, readiness, stats and metrics (app.py)."""

from proxy.admin.app import create_admin_app

__all__ = ["create_admin_app"]
