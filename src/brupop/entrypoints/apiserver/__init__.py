"""`brupop apiserver`: the agents' HTTPS door to the cluster (Starlette app served by uvicorn).

`build_apiserver_app` and `serve_in_thread` let `brupop simulate` and tests run it in-process.
"""

from brupop.entrypoints.apiserver.app import ApiserverOptions, build_apiserver_app
from brupop.entrypoints.apiserver.server import RunningServer, serve_in_thread

__all__ = ["ApiserverOptions", "RunningServer", "build_apiserver_app", "serve_in_thread"]
