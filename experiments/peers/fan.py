"""A FAN with known parameters (Monti & Cooper 1999, §5.1.1): sampler and exact entropy.

Used by the fan-uci reproduction and by tests/test_mixture.py.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fan_conditional_entropy", "known_fan", "sample_fan"]


def known_fan(gen: np.random.Generator, n_classes=2, k=3, n_features=8, r=4):
    """A random FAN with ``k`` components: ``(p(C), p(H), theta (p, C, K, r))``.

    Mixing proportions (0.3, 0.3, 0.4) for k=3 (equal otherwise); each ``p(X_i | c, h)`` is
    drawn from a Dirichlet(0.5), so components differ clearly.
    """
    prior = gen.dirichlet(np.full(n_classes, 5.0))
    weights = np.array([0.3, 0.3, 0.4]) if k == 3 else np.full(k, 1.0 / k)
    theta = gen.dirichlet(np.full(r, 0.5), size=(n_features, n_classes, k))
    return prior, weights, theta


def sample_fan(model, n: int, gen: np.random.Generator):
    """``n`` records from a FAN: ``(X DataFrame, y Series, value codes (n, p), class codes)``."""
    import pandas as pd

    prior, weights, theta = model
    p = theta.shape[0]
    y = gen.choice(len(prior), size=n, p=prior)
    h = gen.choice(len(weights), size=n, p=weights)
    cdf = np.cumsum(theta[:, y, h].transpose(1, 0, 2), axis=2)  # (n, p, r)
    x = (gen.random((n, p, 1)) > cdf).sum(axis=2)
    X = pd.DataFrame({f"x{i}": [f"v{v}" for v in x[:, i]] for i in range(p)})
    return X, pd.Series([f"c{c}" for c in y]), x, y


def fan_conditional_entropy(model, x: np.ndarray, y: np.ndarray) -> float:
    """Eq. 13 under the generating FAN itself (eq. 12 evaluated directly)."""
    from scipy.special import logsumexp

    prior, weights, theta = model
    log_theta = np.log(theta)
    s = np.zeros((x.shape[0], len(prior), len(weights)))
    for i in range(x.shape[1]):
        s += log_theta[i][:, :, x[:, i]].transpose(2, 0, 1)
    joint = np.log(prior)[None] + logsumexp(s + np.log(weights)[None, None], axis=2)
    post = joint - logsumexp(joint, axis=1, keepdims=True)
    return float(-post[np.arange(len(y)), y].mean())
