"""Running the proxy.

    core.py        ServiceCore: what outlives a config (state, accounting, registry), the current runtime
    service.py     Service: a ServiceCore with its live reload and admin API (ties reload.py and operations.py in)
    runtime.py     Runtime: one loaded config ready to serve, swapped whole on reload
    reload.py      reload_config: refuse a config with errors, swap a valid one, drop unreachable routes
    shell.py       PublicApp: the webhook ASGI app (lifespan, runtime per request, drain and 503)
    run.py         serve(): the listeners of one process, SIGHUP reload, SIGTERM drain
    workers.py     serve --workers N (uvicorn's process manager; validated rolling restarts)
    operations.py  Operations: the admin API's operations on a Service
    demo.py        DemoAgents: the demo agents of `make run` (pause, resume)
    listener.py    Listener: a uvicorn server whose signals its owner handles
    edge.py        EdgeProtocol: both listeners' connection cap, header and body deadlines, header bytes
"""

from stickyroute.server.service import Service

__all__ = ["Service"]
