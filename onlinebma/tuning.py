"""Every memory budget and speed crossover of the library, in one place.

None of these numbers changes a prediction: a budget bounds the memory of a cache or of the
temporaries of one vectorised step, and a crossover chooses between two exact paths (plain
Python floats or numpy, one route or another) by which is faster. Only ``MAX_FAMILIES`` and
``MAX_FEATURES`` change what a learner accepts: a record beyond them is refused up front. Each is
given with what it bounds and the command that measures it; the measurements themselves are in the
documents those commands write (``docs/results/``, ``docs/tan.md`` *Speed*, ``docs/isa.md``), never
in code comments, because they depend on the machine.

The modules read these at the time of use (``tuning.NAME``), so a test or a benchmark sets
one with ``monkeypatch.setattr(onlinebma.tuning, "NAME", value)`` and every learner, those
already built included, follows it. The bounded caches
(:class:`~onlinebma.caching.BoundedCache`) take the name of their budget here.

Numerical safety limits (``stats.numerics.RENORMALISE_ABOVE``, ``stats.elimination.SAFE_NATS``,
…) are not tuning and stay with their arithmetic.
"""

from __future__ import annotations

# ---------------------------------------------------------------- a record's tree sum
# Measured by ``python -m experiments.tan_paths`` (``--narrow`` for NARROW_CELLS and
# TINY_ARRAY_GRAPHS); chosen by onlinebma.tan.record_sums.choose_route.

#: A stack of B graphs of g nodes with B g^3 at most this is summed in plain Python floats.
BASIS_WORK = 1500
#: Graphs of more nodes than this never take the tree basis (its error bound fails there).
BASIS_NODES = 24
#: A stack of tree bases forms each graph's M = I + A^T A from the products of A's entries
#: within each row (gathers and one bincount, onlinebma.stats.tree_basis) when they number at
#: most 1/SPARSE_PRODUCTS_COST of the multiply-adds of the stacked product of the padded A
#: (BLAS). Measured by replaying recorded calls of ModelAveragedTAN's structure sums (20
#: numeric features; 10 classes at decay="auto" and 3 at decay=1; 600 calls each, fresh
#: learners per pass, best of 5 interleaved passes, load 4-5): with this at 16, 0.90x the time
#: of the dense product alone at both shapes.
SPARSE_PRODUCTS_COST = 16
#: Stacks of at least this many graphs of 2-3 features take their closed sums with numpy.
TINY_ARRAY_GRAPHS = 6
#: Records of at most this many gathered cells (classes x columns x members) take the
#: plain-Python terms of onlinebma.tan.narrow.
NARROW_CELLS = 64
#: A record's AODE estimates of R count rows, K classes and m observed features
#: (onlinebma.tan.one_dependence.log_joint) are computed in plain Python floats when
#: R K (m + 1)^2 is at most this, else by numpy. Measured by timing log_joint in one process
#: with this set to -1 (numpy) and to 10**9 (plain), interleaved, best of several repeats, on
#: fixed random counts at R = 1-5, K = 2-4, m = 2-5.
NARROW_AODE_TERMS = 50
#: A stack's joint log likelihoods of M members and K classes are turned into class
#: probabilities (onlinebma.tan.members.class_probabilities) in plain Python floats when M K is
#: at most this, else by numpy. Measured by timing class_probabilities in one process with this
#: set to -1 (numpy) and to 10**9 (plain), interleaved, best of 3 x 3 x 2,000 calls, at M = 2-15
#: and K = 2-10 (load 5 on 2 cores): plain floats faster up to 9 cells (M = 2-4, K = 2-3), even
#: at 10-12, numpy faster from 15 cells on (2-4x at M = 15, the members of decay="auto").
MEMBER_SOFTMAX_CELLS = 10
#: Stacks of B graphs of m nodes with B m^3 <= SMALL_WORK + SMALL_WORK_PER_NODE m are
#: eliminated in plain Python floats by log_tree_sum's "auto" path.
SMALL_WORK = 1300
SMALL_WORK_PER_NODE = 200
#: Stacks of more graphs than this take the tree basis with numpy's stacked calls, fewer a
#: loop over the graphs.
LOOP_GRAPHS = 8
#: Matrix entries per log_tree_sum call of a batch of records (onlinebma.tan.tree_terms).
TREE_BATCH_ENTRIES = 1 << 18

# ---------------------------------------------------------------- caches of the tree learners
# Memory, not speed: ``tests/test_tan_caches.py`` checks that they bound the caches.

#: Integers of the column plans (per set of observed features) of a PairCounts.
PAIR_PLAN_CELLS = 1 << 20
#: Numbers of the pair ids and priors (per set of observed features) of TreeTerms.
TREE_PLAN_CELLS = 1 << 20
#: Tree bases kept (one per set of observed features) by RecordTreeSums.
TREE_BASES = 64
#: Gather and scatter indices are kept per tree basis for stacks of up to this many graphs
#: (a record's); a batch's are made for each call.
CACHED_GRAPHS = 64
#: Gather and scatter layouts kept per tree basis (entries: one per stack size and trees).
BASIS_LAYOUTS = 64
#: Flat positions of the edge weights kept per set of observed pairs by a ModelAveragedTAN's
#: learning (a stream whose records each miss another set of features would grow them).
FLAT_CELLS = 1 << 16
#: Column indices kept by a tree learner's record reading over all its codings (one entry per
#: coding of a record: a narrow stream repeats few, wide records rarely repeat).
READING_CELLS = 1 << 18

# ---------------------------------------------------------------- pair counts
#: Rows x pairs of index arrays per bincount of PairCounts.learn_many (memory).
PAIR_CHUNK_CELLS = 1 << 22
#: Records of at most this many observed features take their columns from one integer
#: product with a design matrix, wider ones gather (``python -m experiments.tan_paths``).
DESIGN_FEATURES = 10

# ---------------------------------------------------------------- Gaussian members
# Measured by ``python -m experiments.gaussian_paths`` (the full-covariance members) and
# ``python -m experiments.independent_paths`` (the independent Gaussians).

#: A record's Student t predictives of F complete factors of d features are computed in
#: plain Python floats when F (d^3 + 125) is at most this, else by numpy. Re-measured when
#: T^(1/2)'s rows came to be rotated in as single-nonzero rows (FullStatistics, per call,
#: both paths interleaved in one process, process time, best of 40 rounds at load 5-6 on 2
#: cores; plain floats vs numpy µs): 2 x d 5 (500) 77 vs 85, 4 x d 3 (608) 82 vs 83,
#: 1 x d 8 (637) 77 vs 79, 2 x d 6 (682) 97 vs 83, 4 x d 4 (756) 111 vs 85.
NARROW_PREDICTIVE_WORK = 600
#: A record is rotated into the factors it reaches (F of them, d features each) by one call
#: of LAPACK's triangle-plus-rows QR (scipy's dtpqrt) per factor when d is at most this, else
#: by numpy's QR of the stacked factors. Measured by the update table of
#: experiments.gaussian_paths (FullStatistics.add, paths interleaved in one process, best of
#: 9 rounds of 50 calls, load 5-6 on 2 cores; plain-float rotations vs dtpqrt vs numpy µs):
#: dtpqrt the fastest at every shape up to 17 features, 1 x d 1: 41 / 34 / 63, 5 x d 2:
#: 67 / 53 / 76, 2 x d 4: 63 / 48 / 71, 5 x d 6: 114 / 59 / 81, 5 x d 7: 136 / 67 / 89,
#: 10 x d 6: 192 / 77 / 108, 5 x d 10: 184 / 71 / 94, 5 x d 16: 303 / 86 / 104 (so the
#: plain-float rotations, formerly below F d^2 = 100, are gone); then a cliff: from 18
#: features calls (dtpqrt's own blocking, nb = d) can wait milliseconds (in one run every
#: call: 1 x d 18 7705 µs vs numpy's 173, 23 ms at d 20; in another none), seemingly a
#: threaded step of scipy's OpenBLAS on a loaded machine.
TRIANGLE_UPDATE_FEATURES = 16
#: The independent Gaussians' Student t's of a record (onlinebma.tan.gaussian) are computed
#: in plain Python floats when their statistics number at most this (rows x class slots x
#: features), else by numpy. Measured by ``python -m experiments.independent_paths`` (both
#: paths interleaved in one process, process time, best of 7 rounds, load 4-5 on 2 cores):
#: plain floats cost about 2.5 µs a cell, numpy about 110-200 µs flat; even from 30 to 48
#: cells, numpy faster from 54 (re-measured with the plain path's log-gammas by scipy's
#: gammaln, as the numpy path's).
NARROW_INDEPENDENT_CELLS = 48
#: A record is added to MomentStatistics of at most this many statistics (batch cells x
#: features) in plain Python floats, else by numpy. Measured as NARROW_INDEPENDENT_CELLS
#: (the second table): crossed between 54 and 60 cells.
NARROW_MOMENT_UPDATE_CELLS = 48
#: Array elements per block of rows of FullStatistics.add_many (memory).
GAUSSIAN_BLOCK = 1 << 18
#: Ratios of log-gammas kept per prior shape by onlinebma.stats.gaussian (memory).
GAMMA_RATIOS = 1 << 16

# ---------------------------------------------------------------- order MCMC
# Measured by ``python -m experiments bench-order`` and ``python -m experiments order-wide``.

#: Per-node sums kept by a chain of OrderChain (entries).
CHAIN_SUMS = 1_000_000
#: Node mixture weights kept by an OrderModel (entries; one per node, weights and dropped
#: nodes asked).
ORDER_NODE_WEIGHTS = 4096
#: Rows sharing a pattern of dropped nodes from which the shared path of
#: OrderModel.log_joint pays.
ORDER_SHARED_ROWS = 64
#: Expanded rows (records x classes x missing configurations) per batch of
#: OrderModel.log_joint (memory).
ORDER_BATCH_ROWS = 50_000
#: Rows x families of predictive probabilities evaluated at once by the streaming order
#: model (memory).
ORDER_PREDICTIVE_CELLS = 1 << 21
#: Cells (or rows x sets) of one vectorised chunk of the score tables (memory).
SCORE_CHUNK_CELLS = 1 << 22
#: Count entries read at once when families are rescored from the counts (memory).
RESCORE_CHUNK = 1 << 20
#: Cell keys of one block when records are counted into the streaming tables (memory).
COUNT_BLOCK_KEYS = 1 << 20
#: Rows x parent sets of one lookup step over the streaming tables (memory).
LIVE_LOOKUP_CELLS = 1 << 20
#: New candidate parents whose tables would count more record-set pairs than this are
#: counted a slice at a time over the next records (latency of one record).
REBUILD_AT = 1 << 19
#: Record-set pairs counted at most per record learned by a spread rebuild (unless 16
#: records are more).
STEP_PAIRS = 1 << 16
#: Parent sets (over all nodes) the score tables may hold: a record needing more is refused.
MAX_FAMILIES = 2_000_000
#: Features a record (or the records together) may bring to FixedOrderBMA and
#: OrderAveragingClassifier: a record bringing more is refused up front.
MAX_FEATURES = 1_000

# ---------------------------------------------------------------- ISA
# Measured by ``python -m experiments bench-isa`` (docs/isa.md).

#: A stale score is recomputed from all n records, rather than extended record by record,
#: when it misses more than FRESH_RECORDS + FRESH_FRACTION n of them.
FRESH_RECORDS = 32
FRESH_FRACTION = 0.02
#: With a window, a score missing more than this many records is brought up to date by one
#: scoring pass over just those records, not record by record.
WINDOW_EXTEND_RECORDS = 6
#: Models times records up to which a scoring pass takes the models the search will likely
#: ask for next.
SMALL_PASS = 1 << 12
#: Queued models at the top of phase 1's queue whose bounds are brought up to date together.
REFRESH_BATCH = 32
#: Nats below the margin within which the models phase 1 saw are kept up to date.
KEEP_SLACK = 10.0
#: Words of the (models x classes x children x words) temporary of one counting pass
#: (memory).
PASS_WORDS = 1 << 22
#: Records times models of one scoring pass (its temporaries stay in the processor's cache).
PASS_RECORDS = 1 << 15

# ---------------------------------------------------------------- mixtures
# Measured by ``python -m experiments bench-fan`` and ``python -m experiments scale-out-batch``.

#: Designs with at most this many one-hot cells are dense, larger ones sparse (memory).
DENSE_CELLS = 1 << 20
#: Samples per chunk and round when the distributed EM narrows an order statistic.
ORDER_STATISTIC_SAMPLES = 256
#: Values gathered at once when the interval of an order statistic holds this few.
ORDER_STATISTIC_GATHER = 1 << 16

# ---------------------------------------------------------------- naive Bayes wide records
# Measured by ``python -m experiments wide`` ("Crossover of the wide-record path" and
# "Crossover of the nominal path" in docs/results/wide.md; docs/naive_bayes.md, *Speed*).

#: A record with fewer observed numeric features goes the plain-float way (the cheap first test).
WIDE_FEATURES = 16
#: From this many cells on, numeric features times (1 + classes), a record's numeric features
#: take the numpy path of onlinebma.naive_bayes.wide.
WIDE_CELLS = 120
#: A record with fewer observed nominal features goes the plain-float way.
NOMINAL_FEATURES = 8
#: From this many cells on, nominal features times (1 + classes), a record's nominal features
#: take the numpy path of onlinebma.naive_bayes.wide_nominal.
NOMINAL_CELLS = 450
#: NOMINAL_CELLS for BMANB, whose plain path costs more per cell.
BMANB_NOMINAL_CELLS = 240
#: BMANB tabulates the Gamma steps of its eq. 14 sums for counts below this (memory).
BMANB_STEP_TABLE = 1 << 16
