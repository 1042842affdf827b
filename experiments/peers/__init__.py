"""What the reproductions and the tests both use, in one place neither side reaches around.

- :mod:`experiments.peers.weka`: ARFF writing and Weka 3.6.14 runs (discretization, LBR).
- :mod:`experiments.peers.weka_tan`: Weka's TAN and AODE on train/test pairs, in one JVM.
- :mod:`experiments.peers.fan`: a FAN with known parameters, its sampler and exact entropy.

They need Java, Weka or a checkout's data, so they live beside the experiments, not in the
library; the tests import them from here.
"""
