"""simulate's flags, by group, read and checked once into SimulationOptions, with the timings
they become. May import scenarios."""
