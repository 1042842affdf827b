"""ISA: lazy instance-specific Bayesian model averaging (Visweswaran & Cooper 2004).

For every instance to classify, ISA searches a space of small Bayesian networks built around
that instance and averages their predictions, weighted by how well each network predicted the
class of the stored records. The networks are those of the lazy Bayesian rule (LBR) learner:
model ``M(A)`` takes an *antecedent* set ``A`` of features observed in the test instance; the
class ``Z`` has parents ``A`` and every other feature has parents ``{Z} ∪ A`` — a naive Bayes
classifier local to the records that share the test instance's values of ``A``.

The method, fixed by the project's issue so that results are comparable:

- **Parent coding.** ``antecedent="full"`` (default) uses the joint values of ``A`` as the
  parent configuration (the Bayesian-network semantics of the paper). ``"indicator"`` codes
  each antecedent feature as "equals the test instance's value or not" (LBR's semantics). In
  both, a stored record whose antecedent value is missing is in a configuration of its own.
- **Score** (eq. 9): the conditional prequential score, the product over the stored records,
  in arrival order, of the probability of each record's class given its features and the
  records before it, with the parameters of eq. 10 (Dirichlet pseudo-counts ``alpha``). The
  number of values ``r_i`` of a feature and the number of classes are those present in the
  stored records. Missing children are skipped.
- **Search** (§3.4): phase 1 is best-first by score from ``A = ∅`` (naive Bayes); expanding a
  model adds one observed feature to ``A``; duplicates are merged; it stops when ``R`` holds
  ``phase1_models`` models. Phase 2 moves into ``R`` the queued model that changes the
  averaged prediction ``g(R)`` (eq. 12) the most (eq. 11) while the change exceeds
  ``threshold`` and ``|R| < max_models``. The prediction is eq. 8.

Where the paper is silent (see also ``docs/isa.md``):

- A test feature whose value is missing, or whose value does not occur in the stored records,
  is never an antecedent; it stays a child in every model (its factors count in the score) and
  is skipped in the prediction.
- Phase 2 does not expand the models it moves into ``R``: it draws only from the queue left by
  phase 1. §3.4 says phase 1 generates children after each move and is silent about it in
  phase 2, and expanding would roughly double the models to score. ``phase2_expand=True``
  also scores and queues the children of every model phase 2 adds.
- With several classes, the change of eq. 11 is the largest absolute change of any class
  probability (for two classes, the change of either class's probability).
- Ties in score are broken by the antecedent sets' features, taken in the order of the
  features' names, so that the order in which features arrive does not matter.
- ``average=False`` (model selection, the paper's ablation) runs the same search and predicts
  with the highest-scoring model in ``R``.

Speed (see also `search`, `cache`, `index`):

- A model's score over all stored records is computed at once (cumulative counts per parent
  configuration and class; only the classes a record's configuration already holds are
  counted, one value standing for all absent classes; several models per pass). With
  ``antecedent="full"`` the score of ``M(A)`` depends on which features are in ``A`` only, so
  scores — and the whole of phase 1, which depends on nothing else but the set of observed
  features — are cached across test instances.
- An index of the stored records (packed bitsets per feature value, missing value and class)
  gives every count of eq. 10 as popcounts: the predictions of the models for a test instance,
  and the eq. 9 term of a new record for the models whose scores are extended. Appending a
  record to it costs O(p), whatever the number of stored records.
- When records are appended, cached scores become upper bounds (the terms of eq. 9 are log
  probabilities, at most 0); the search extends a score by the new records' terms only when it
  needs it exactly. ``margin``: a model more than ``margin`` nats behind the best in ``R`` is
  negligible — not brought up to date, not expanded, left out of the average (documented
  tolerance ``|R| exp(-margin)`` per class probability).
- With a window, the score is the sliding eq. 9 (below): a record's term never changes, so a
  cached score takes away the terms of the records that left the window (kept per score)
  and adds those of the new ones, one term per record either way; the models a search saw
  near its margin are extended by each new record before the next search, as taking away
  evicted terms raises stale bounds back into the search. Any other change of the stored
  records (new or vanished values or classes, moved cut points) drops the scores: every
  record's terms changed.
- Phase 2 needs the prediction of a queued model only while the bound
  ``|g(R ∪ {M}) - g(R)| <= s_M / (W + s_M)`` (``s_M`` its score, ``W`` the total score of
  ``R``) exceeds the threshold, so most queued models are never evaluated.

Classes. ISA predicts over the classes present in the stored records; the adapter gives a
known class that is absent (it left the window) its documented share (see
`onlinebma.batch`), as for every batch method, with its records counted over the window: a
class that left a window of ``W`` gets ``1 / (W + K)`` (``K`` known classes), though the store
holds ``2 W`` records.

Numeric features are discretized by Fayyad & Irani's MDL rule fitted on the stored records
(the adapter does it; see `onlinebma.batch`). The cut points are refitted by the adapter's
refit policy (``refit_every``), so that on a stream the records between refits keep their codes
and the cached scores are extended instead of recomputed; ``refit_every=1`` refits them before
every prediction that follows new records.

A window of ``W`` (the paper has none; see ``docs/isa.md``): the score of a model is the
*sliding* eq. 9, the sum over the last ``W`` records of the log probability of each record's
class given its features and the ``W`` records before it (the window as it was when the record
arrived), and the models predict from the last ``W`` records. The store holds the last ``2 W``
records (the window and the contexts of its terms); ``r_i``, the classes and the cut points
are those of the ``2 W``. A windowed learner equals ``ISA(window=W)`` trained on the stream's
last ``2 W`` records.

Eq. 9 depends on the order of the stored records (the paper says so). Records sorted by class,
as some UCI files are, favour models that put early records in configurations of their own; a
batch user should shuffle such data before ``fit`` (the paper's Weka cross-validation shuffled
every training fold).

References
----------
Visweswaran, S. and Cooper, G. F. (2004). Instance-specific Bayesian model averaging for
classification. *Advances in Neural Information Processing Systems 17*.

Modules: `scorer` (eq. 9 and eq. 10 over the adapter's canonical table), `index`
(the bitset index of the stored records), `cache` (scores kept across test instances and
extended as records arrive), `search` (the two phases of §3.4) and `classifier` (the
River classifier and ``explain_one``).
"""

from .classifier import ISA

__all__ = ["ISA"]
