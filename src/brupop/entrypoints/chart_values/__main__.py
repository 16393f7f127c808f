"""`python -m brupop.entrypoints.chart_values BASE`: print the chart's values schema."""

import sys

from brupop.entrypoints.chart_values.values_schema import main

sys.exit(main())
