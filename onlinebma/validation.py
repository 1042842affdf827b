"""Hyperparameter validation shared by every learner: one wording for every refusal.

>>> check_int("n_init", 3, low=1)
>>> check_real("alpha", 0.0, low=0.0, strict=True)
Traceback (most recent call last):
...
ValueError: alpha must be a finite number > 0.0, got 0.0
>>> check_choice("prior", "K3", ("K2", "BDeu"))
Traceback (most recent call last):
...
ValueError: prior must be one of ('K2', 'BDeu'), got 'K3'
"""

from __future__ import annotations

import math
import numbers

__all__ = ["NotFittedError", "check_bool", "check_choice", "check_decay", "check_int",
           "check_mergeable_with", "check_real"]



class NotFittedError(ValueError, AttributeError):
    """A fitted attribute read before the learner has learned anything (as scikit-learn's: a
    ``ValueError`` and an ``AttributeError``, so ``hasattr(model, "weights_")`` is ``False``).
    The learner is left as it was."""

def check_int(name: str, value, low: int) -> None:
    """An integer (not a bool) at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def check_real(name: str, value, low: float, strict: bool, high: float = math.inf,
               strict_high: bool = False) -> None:
    """A finite real number (not a bool) above ``low`` (``>`` if ``strict``) and below ``high``."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if strict else value >= low)
    ok = ok and (value < high if strict_high else value <= high)
    if not ok:
        bound = f"> {low}" if strict else f">= {low}"
        if high != math.inf:
            bound += f" and {'<' if strict_high else '<='} {high}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")


def check_bool(name: str, value) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")


def check_decay(name: str, value, auto: bool) -> None:
    """A real number in (0, 1], or ``"auto"`` when ``auto``; a ValueError naming ``name``."""
    if auto and isinstance(value, str) and value == "auto":
        return
    ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
          and math.isfinite(value) and 0.0 < value <= 1.0)
    if not ok:
        allowed = 'a number in (0, 1] or "auto"' if auto else "a number in (0, 1]"
        raise ValueError(f"{name} must be {allowed}, got {value!r}")


def check_choice(name: str, value, choices: tuple) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def check_mergeable_with(learner, other) -> None:
    """``other`` can be merged into ``learner``: the same class, the same hyperparameters."""
    if type(other) is not type(learner):
        raise TypeError(f"cannot merge {type(learner).__name__} with {type(other).__name__}")
    # River's Base._get_params: the hyperparameters, nested estimators as (class, params)
    mine, theirs = (lrn._get_params() for lrn in (learner, other))
    if theirs != mine:
        raise ValueError(
            f"cannot merge learners with different hyperparameters: {mine} vs {theirs}")
