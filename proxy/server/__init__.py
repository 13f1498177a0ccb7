"""Running the proxy: service assembly (service.py), uvicorn listeners (run.py), demo agents."""
