"""Helpers only the tests share (the ones the experiments use too are in experiments/peers)."""
