"""What the brute-force tests treat as a record's observed values (None and NaN are missing)."""

import math


def observed(x: dict) -> dict:
    """``x`` without its missing values (None, NaN), as the learners read it."""
    return {f: v for f, v in x.items()
            if v is not None and not (isinstance(v, float) and math.isnan(v))}
