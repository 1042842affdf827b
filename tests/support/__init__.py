"""Helpers shared by the tests (and by the experiments of a checkout)."""
