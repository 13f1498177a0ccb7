"""The admin listener: health, readiness, stats and metrics (admin/app.py)."""
