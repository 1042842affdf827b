"""Bayesian model averaging of Bayesian-network classifiers over node orders.

- :class:`FixedOrderBMA` — exact averaging over every DAG consistent with one node order
  (Dash & Cooper 2004), the building block.
- :class:`OrderMCMC` — averaging over node orders sampled by Metropolis–Hastings with the swap
  move (Hwang & Zhang 2005).

Modules: :mod:`~onlinebma.order_mcmc.scores` (parent-set score tables),
:mod:`~onlinebma.order_mcmc.order_model` (exact fixed-order averaging and prediction, array
level), :mod:`~onlinebma.order_mcmc.fixed_order` (the River/pandas classifiers' shell and
:class:`FixedOrderBMA`), :mod:`~onlinebma.order_mcmc.chain` (the chain over orders),
:mod:`~onlinebma.order_mcmc.sampler` (:class:`OrderMCMC`), and for streams
:mod:`~onlinebma.order_mcmc.incremental` (family scores per record) over sparse counts
(:mod:`~onlinebma.order_mcmc.sparse`) shared per variable set at the keys of
:mod:`~onlinebma.order_mcmc.layout`, read family by family by
:mod:`~onlinebma.order_mcmc.count_reads`, and rebuilt for new candidate parents a slice at
a time by :mod:`~onlinebma.order_mcmc.successor`.
"""

from .fixed_order import FixedOrderBMA
from .order_model import OrderModel
from .sampler import OrderChain, OrderMCMC

__all__ = ["FixedOrderBMA", "OrderChain", "OrderMCMC", "OrderModel"]
