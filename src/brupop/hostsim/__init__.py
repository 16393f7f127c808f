"""A Bottlerocket host emulator: an executable stand-in for `apiclient` in simulations."""
