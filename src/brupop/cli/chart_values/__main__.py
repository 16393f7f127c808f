"""`python -m brupop.cli.chart_values BASE`: print the chart's values schema."""

import sys

from brupop.cli.chart_values.values_schema import main

sys.exit(main())
