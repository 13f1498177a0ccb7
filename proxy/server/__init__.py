"""Running the proxy: service assembly (service.py), uvicorn listeners (run.py), demo agents (demo.py)."""

from proxy.server.service import Service

__all__ = ["Service"]
