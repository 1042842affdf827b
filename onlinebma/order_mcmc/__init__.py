"""Bayesian model averaging of Bayesian-network classifiers over node orders.

- :class:`FixedOrderBMA` — exact averaging over every DAG consistent with one node order
  (Dash & Cooper 2004), the building block.
- :class:`OrderMCMC` — averaging over node orders sampled by Metropolis–Hastings with the swap
  move (Hwang & Zhang 2005).

Modules: :mod:`~onlinebma.order_mcmc.scores` (parent-set score tables),
:mod:`~onlinebma.order_mcmc.fixed_order` (exact fixed-order averaging, prediction) and
:mod:`~onlinebma.order_mcmc.sampler` (the chain over orders).
"""

from .fixed_order import FixedOrderBMA, OrderModel
from .sampler import OrderChain, OrderMCMC

__all__ = ["FixedOrderBMA", "OrderChain", "OrderMCMC", "OrderModel"]
