"""`python -m tests.support.control_plane`: the body of `scripts/control-plane`."""

import sys

from tests.support.control_plane.cli import main

sys.exit(main(sys.argv[1:]))
