"""The CRD conversion webhook's worker: a supervised process (`python -m
brupop.adapters.apiserver_http.conversion.worker`), its framed pipe exchange and its answers.
Imports the domain only, so the worker never loads the web stack."""
