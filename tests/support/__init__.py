"""Helpers shared by the tests and the reproductions of a checkout (not installed)."""
