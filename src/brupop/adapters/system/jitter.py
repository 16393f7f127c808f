"""Uniform draws in [0, 1) for the jitter of retry backoffs, from the OS's random bytes.

The `random` module would serve as well, but importing it (hashlib and its OpenSSL bindings
come with it) costs the agent about 4 ms of CPU at every start, under `cpu: 10m`.
"""

from __future__ import annotations

import os

_BITS = 53  # a double's precision: every draw is exact and below 1.0


def uniform() -> float:
    """A draw in [0, 1), each of 2**53 evenly spaced values equally likely."""
    return (int.from_bytes(os.urandom(7), "big") >> (56 - _BITS)) / 2.0**_BITS
