"""ISA's cache of model scores, kept across test instances and extended as records arrive.

With the full coding the score of ``M(A)`` depends on which features are in ``A`` only, so it
is cached per ``A``; with the indicator coding per ``A`` and the test instance's values on
``A``. A cached score remembers which records it covers (positions ``first .. total - 1``).
Eq. 9 is a sum over the records in arrival order, so when records are appended a score is
extended by the new records' terms —
only when the search asks for it (`search`: a score that is not brought up to date is an
upper bound on the current one). Each new record's terms come from the bitset index, for all
the models being extended at once, so extending costs the same per new record whether one or
a thousand records arrived. A score that misses many records (more than ``FRESH_RECORDS``
plus ``FRESH_FRACTION`` of all) is computed afresh instead, which is then cheaper: so the cost
per new record never jumps up as more records arrive between predictions. The models averaged
for recent test instances (``hot``) are extended together before the next search.

When records leave a window, a cached score is no bound any more (a record's term rises or
falls when earlier records of its configuration leave). The cache of a windowed learner then
keeps each score's terms, one per record, and gives the search a bound that survives
eviction (`Scorer.evicted_bounds`): the sum of the terms of the live records in the
configurations no evicted record was in. As without a window, the search brings up to date
(`Scorer.rescored`: only the configurations of the records evicted and appended since are
rescored) only the scores it needs exact, and the models averaged for recent test instances
together before the next search; evicting costs nothing until then.
"""

from __future__ import annotations

import numpy as np

from .scorer import Scorer

__all__ = ["ScoreCache"]

#: A stale score is recomputed from all records, rather than extended record by record, when
#: it misses more than ``FRESH_RECORDS + FRESH_FRACTION * n`` of the ``n`` records: one sort of
#: all records then costs less than the terms of that many records (measured on 16 features:
#: a record's terms cost about 1/100 to 1/200 of a full scoring).
FRESH_RECORDS = 32
FRESH_FRACTION = 0.02
#: Models times records up to which a scoring pass takes models the search will likely ask
#: for next (`_InstanceScores.bounds`). Measured: about 40% of a pass of 4 models of
#: house-votes-84's 391 records is the fixed cost of its numpy calls (per model 0.31 ms at
#: 4 models, 0.20 ms from 8 on), and filling such passes cut its fold by a sixth;
#: soybean's (12 of 614 records) got slower when filled without this bound (their
#: temporaries leave the processor's cache), and are left as they are.
SMALL_PASS = 1 << 12
#: A search that brought up to date more than ``WASTED_BOUNDS`` of the bounds it was given
#: (`ScoreCache.evicted_bounds`) paid for bounds it did not use: the next ``PROBE_EVERY``
#: searches score those models at once instead, then one is given bounds again. Measured
#: (window full, per record): on Phishing (9 features, window 300) 97% of the bounds were
#: brought up to date, 224 ms with bounds against 176 without; on the 16-feature nominal
#: stream (window 500) 36%, 119 against 236 ms.
WASTED_BOUNDS = 0.75
PROBE_EVERY = 8


class ScoreCache:
    """``{key: [log score, first, total]}`` for one `Scorer`: the score covers the records at
    positions ``first .. total - 1``. ``window``: the scorer's records may slide; the terms
    of each score are then kept too (``terms[key]``, one per covered record)."""

    def __init__(self, scorer: Scorer, coding: str, window: bool = False):
        self.scorer = scorer
        self.coding = coding
        self.entries: dict = {}
        self.terms: dict | None = {} if window else None
        self.hot: set = set()  # keys averaged by recent searches
        self.hot_at = 0  # records when the hot keys were last brought up to date
        self.bounded: set = set()  # keys the current search was given bounds for
        self.wasted = 0  # of those, brought up to date since
        self.unbounded = 0  # searches left that score at once, not bound

    def __len__(self):
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        """About 100 bytes per cached score, plus the terms kept."""
        kept = 0 if self.terms is None else sum(t.nbytes for t in self.terms.values())
        return 100 * len(self.entries) + kept

    def key(self, A: tuple, xt: np.ndarray):
        return A if self.coding == "full" else (A, tuple(int(xt[j]) for j in A))

    def for_instance(self, xt: np.ndarray) -> _InstanceScores:
        """The scores the search of test row ``xt`` (compact codes) asks for."""
        n = self.scorer.n
        if self.bounded:
            self.unbounded = PROBE_EVERY if self.wasted > WASTED_BOUNDS * len(
                self.bounded) else 0
            self.bounded, self.wasted = set(), 0
        elif self.unbounded:
            self.unbounded -= 1
        if self.hot and n != self.hot_at:  # most will be asked for: extend them in one pass
            self.refresh([k for k in self.hot if k in self.entries and
                          n - self.entries[k][2] <= FRESH_RECORDS + FRESH_FRACTION * n])
            self.hot, self.hot_at = set(), n
        return _InstanceScores(self, xt)

    def refresh(self, keys: list) -> list:
        """Bring the scores of ``keys`` up to date (scoring unseen ones); returns them."""
        sc, n, start = self.scorer, self.scorer.n, self.scorer.start
        fresh, stale, moved = [], [], []
        for k in dict.fromkeys(keys):
            entry = self.entries.get(k)
            if entry is None or entry[2] <= start or (
                    entry[1] == start and n - entry[2] > FRESH_RECORDS + FRESH_FRACTION * n):
                fresh.append(k)
            elif entry[1] < start:
                moved.append(k)
            elif entry[2] < n:
                stale.append(k)
        if fresh:
            models = [self._model(k) for k in fresh]
            args = [A for A, _ in models], self.coding, [v for _, v in models]
            if self.terms is None:
                scores = sc.log_scores(*args)
            else:
                terms = sc.log_scores(*args, per_record=True)
                scores = terms.sum(axis=1)
                self.terms.update(zip(fresh, terms))
            for k, score in zip(fresh, scores.tolist()):
                self.entries[k] = [score, start, n]
        if moved:
            self.wasted += sum(k in self.bounded for k in moved)
            self._slide(moved)
        if stale:
            self._extend(sorted(stale, key=lambda k: self.entries[k][2]))
        return [self.entries[k][0] for k in keys]

    def _slide(self, keys: list):
        """Bring up to date the scores of ``keys``, some of whose records left the window."""
        sc = self.scorer
        entries = [self.entries[k] for k in keys]
        models = [self._model(k) for k in keys]
        scores, terms = sc.rescored([A for A, _ in models], self.coding,
                                    [v for _, v in models], [e[0] for e in entries],
                                    [e[1] for e in entries], [e[2] for e in entries],
                                    [self.terms[k] for k in keys])
        self.terms.update(zip(keys, terms))
        for entry, score in zip(entries, scores.tolist()):
            entry[:] = [score, sc.start, sc.n]

    def evicted_bounds(self, keys: list) -> dict:
        """``{key: upper bound}`` for ``keys``, some of whose records left the window."""
        sc = self.scorer
        entries = [self.entries[k] for k in keys]
        models = [self._model(k) for k in keys]
        bounds = sc.evicted_bounds([A for A, _ in models], self.coding, [v for _, v in models],
                                   [self.terms[k] for k in keys], [e[1] for e in entries],
                                   [e[2] for e in entries])
        self.bounded.update(keys)
        return dict(zip(keys, bounds.tolist()))

    def _model(self, key):
        """``(A, values its configurations are coded against)``; ``None`` = each record's own."""
        if self.coding == "full":
            return key, None
        A, values = key
        xt = np.full(self.scorer.p, -1, dtype=np.int64)
        xt[list(A)] = values
        return A, xt

    def _extend(self, keys: list):
        """Add the terms of eq. 9 of the records each score misses (``keys`` by coverage)."""
        sc = self.scorer
        entries = [self.entries[k] for k in keys]
        models = [k if self.coding == "full" else k[0] for k in keys]
        coded = None if self.coding == "full" else [k[1] for k in keys]
        added = [[] for _ in keys]  # the new terms, kept with a window
        active = 0
        for t in range(entries[0][2], sc.n):
            while active < len(keys) and entries[active][2] <= t:
                active += 1
            values = None if coded is None else coded[:active]  # None: record t's own
            terms = sc.record_terms(models[:active], values, t)
            for entry, term, more in zip(entries[:active], terms.tolist(), added):
                entry[0] += term
                more.append(term)
        for entry in entries:
            entry[2] = sc.n
        if self.terms is not None:
            for k, more in zip(keys, added):
                self.terms[k] = np.concatenate([self.terms[k], more])


class _InstanceScores:
    """The cache as the search of one test instance sees it (see `search`)."""

    def __init__(self, cache: ScoreCache, xt: np.ndarray):
        self.cache, self.xt = cache, xt

    def bounds(self, models: list, also=()) -> list:
        """The cached scores (upper bounds if records arrived since), or upper bounds on them
        if some of their records left the window (`ScoreCache.evicted_bounds`; brought up to
        date instead while the cache finds its bounds wasted, see `WASTED_BOUNDS`); unseen
        models scored (and those all of whose records left), and when some are, unseen models of
        ``also`` with them while the pass holds fewer than ``SMALL_PASS`` models times
        records (a small pass pays much of its cost in fixed numpy calls)."""
        cache, start = self.cache, self.cache.scorer.start
        entries = cache.entries
        keys = [cache.key(A, self.xt) for A in models]
        bounding = cache.terms is not None and not cache.unbounded
        unseen = [k for k in keys if k not in entries or entries[k][2] <= start
                  or (entries[k][1] < start and not bounding)]
        if unseen:
            more = [k for k in (cache.key(A, self.xt) for A in also) if k not in entries]
            room = SMALL_PASS // max(cache.scorer.live, 1) - len(unseen)
            cache.refresh(unseen + more[: max(room, 0)])
        moved = [k for k in keys if entries[k][1] < start]
        bound = cache.evicted_bounds(moved) if moved else {}
        return [bound[k] if k in bound else entries[k][0] for k in keys]

    def exact(self, A: tuple) -> bool:
        entry = self.cache.entries.get(self.cache.key(A, self.xt))
        sc = self.cache.scorer
        return entry is not None and entry[1:] == [sc.start, sc.n]

    def refresh(self, models: list) -> list:
        return self.cache.refresh([self.cache.key(A, self.xt) for A in models])

    def predict(self, models: list) -> np.ndarray:
        """The models' class distributions for the instance; they are marked hot."""
        cache = self.cache
        cache.hot.update(cache.key(A, self.xt) for A in models)
        return cache.scorer.predict(models, None, self.xt)
