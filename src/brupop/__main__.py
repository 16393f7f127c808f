"""`python -m brupop` is the `brupop` command."""

import sys

from brupop.cli.main import main

sys.exit(main())
