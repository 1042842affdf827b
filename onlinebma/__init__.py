"""onlinebma: Bayesian-model-averaging classifiers for streams, as River learners."""

__version__ = "0.1.0"
