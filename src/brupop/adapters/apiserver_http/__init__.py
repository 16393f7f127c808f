"""The apiserver's HTTPS server: a driving adapter (Starlette app, uvicorn serving, routes).

It imports nothing on purpose: the conversion worker process lives below it and must not load
the web stack.
"""
