"""`python -m brupop` is the `brupop` command."""

import sys

from brupop.entrypoints.cli import main

sys.exit(main())
