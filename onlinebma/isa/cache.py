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

With a window the score is the sliding eq. 9 (`scorer`): a record's term counts the
``window`` records before it, so it never changes once computed. The cache of a windowed
learner keeps each score's terms, one per record covered (as running sums); when records leave
the window, their terms are taken away (`ScoreCache.trim`: a difference of two running sums,
no scoring), and what is left is again the score
over the live records it covers — an upper bound on the current score, brought up to date by
the new records' terms as without a window. So a record that arrives or leaves costs the same
per cached model, one term, whatever the window.
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
#: With a window, a score that misses more than ``WINDOW_EXTEND_RECORDS`` records is brought
#: up to date by one scoring pass over just those records and their contexts (`Scorer.
#: log_scores` with ``since``: about W + s records read for s missed, never more than a fresh
#: scoring's 2 W), not record by record. Measured on the 16-feature nominal stream, window
#: 300: a pass over all 2 W records cost about as much as 13 records' terms (9 against 0.7 ms).
WINDOW_EXTEND_RECORDS = 6
#: Models times records up to which a scoring pass takes models the search will likely ask
#: for next (`_InstanceScores.bounds`). Measured: about 40% of a pass of 4 models of
#: house-votes-84's 391 records is the fixed cost of its numpy calls (per model 0.31 ms at
#: 4 models, 0.20 ms from 8 on), and filling such passes cut its fold by a sixth;
#: soybean's (12 of 614 records) got slower when filled without this bound (their
#: temporaries leave the processor's cache), and are left as they are.
SMALL_PASS = 1 << 12

class ScoreCache:
    """``{key: [log score, first, total]}`` for one `Scorer`: the score covers the records at
    positions ``first .. total - 1``. ``window``: the scorer's records may slide; the terms
    of each score are then kept too, as running sums: ``sums[key] = (base, cum)``, ``cum[i]``
    the sum of the terms of the records at ``base .. base + i - 1`` (``base <= first``)."""

    def __init__(self, scorer: Scorer, coding: str, window: bool = False):
        self.scorer = scorer
        self.coding = coding
        self.entries: dict = {}
        self.sums: dict | None = {} if window else None
        self.hot: set = set()  # keys averaged by recent searches
        self.hot_at = 0  # records when the hot keys were last brought up to date

    def __len__(self):
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        """About 100 bytes per cached score, plus the running sums kept."""
        kept = 0 if self.sums is None else sum(c.nbytes for _, c in self.sums.values())
        return 100 * len(self.entries) + kept

    def key(self, A: tuple, xt: np.ndarray):
        return A if self.coding == "full" else (A, tuple(int(xt[j]) for j in A))

    def _too_stale(self, entry) -> bool:
        """Whether a score misses so many records that scoring it afresh is cheaper (without a
        window), or scoring the records it misses in one pass (with one)."""
        sc = self.scorer
        if self.sums is None:
            return sc.n - entry[2] > FRESH_RECORDS + FRESH_FRACTION * sc.live
        return sc.n - entry[2] > WINDOW_EXTEND_RECORDS

    def for_instance(self, xt: np.ndarray) -> _InstanceScores:
        """The scores the search of test row ``xt`` (compact codes) asks for."""
        n = self.scorer.n
        if self.hot and n != self.hot_at:  # most will be asked for: extend them in one pass
            hot = self.trim(self.hot)
            self.refresh([k for k in hot if not self._too_stale(self.entries[k])])
            self.hot, self.hot_at = set(), n
        return _InstanceScores(self, xt)

    def trim(self, keys) -> list:
        """Take away from the scores of ``keys`` the terms of the records that left the window
        (dropping the scores all of whose records left); returns the keys still cached."""
        entries, start = self.entries, self.scorer.start
        cached = []
        for k in keys:
            entry = entries.get(k)
            if entry is None:
                continue
            if entry[1] < start:
                if entry[2] <= start:
                    del entries[k], self.sums[k]
                    continue
                base, cum = self.sums[k]
                gone = start - base
                entry[:2] = [float(cum[-1] - cum[gone]), start]
                if 2 * gone > cum.size:  # rebased once most of its records left: O(1) a record
                    self.sums[k] = start, cum[gone:] - cum[gone]
            cached.append(k)
        return cached

    def refresh(self, keys: list) -> list:
        """Bring the scores of ``keys`` up to date (scoring unseen ones); returns them."""
        sc, n = self.scorer, self.scorer.n
        keys = list(keys)
        unique = list(dict.fromkeys(keys))
        if self.sums is not None:
            self.trim(unique)
        fresh, stale, behind = [], [], []
        for k in unique:
            entry = self.entries.get(k)
            if entry is None or (self.sums is None and self._too_stale(entry)):
                fresh.append(k)
            elif entry[2] < n:
                (behind if self.sums is not None and self._too_stale(entry) else stale).append(k)
        if behind:
            self._catch_up(behind)
        if fresh:
            models = [self._model(k) for k in fresh]
            args = [A for A, _ in models], self.coding, [v for _, v in models]
            if self.sums is None:
                scores = sc.log_scores(*args)
            else:
                terms = sc.log_scores(*args, per_record=True)
                scores = terms.sum(axis=1)
                cums = np.zeros((len(fresh), terms.shape[1] + 1))
                np.cumsum(terms, axis=1, out=cums[:, 1:])
                self.sums.update((k, (sc.start, cum)) for k, cum in zip(fresh, cums))
            for k, score in zip(fresh, scores.tolist()):
                self.entries[k] = [score, sc.start, n]
        if stale:
            self._extend(sorted(stale, key=lambda k: self.entries[k][2]))
        return [self.entries[k][0] for k in keys]

    def _model(self, key):
        """``(A, values its configurations are coded against)``; ``None`` = each record's own."""
        if self.coding == "full":
            return key, None
        A, values = key
        xt = np.full(self.scorer.p, -1, dtype=np.int64)
        xt[list(A)] = values
        return A, xt

    def _catch_up(self, keys: list):
        """With a window: add to the scores of ``keys`` the terms of the records they miss,
        scored in one pass from the first record any of them misses."""
        sc = self.scorer
        since = min(self.entries[k][2] for k in keys)
        models = [self._model(k) for k in keys]
        terms = sc.log_scores([A for A, _ in models], self.coding, [v for _, v in models],
                              per_record=True, since=since)
        for k, row in zip(keys, terms):
            entry = self.entries[k]
            more = row[entry[2] - since:]
            base, cum = self.sums[k]
            cum = np.concatenate([cum, cum[-1] + np.cumsum(more)])
            self.sums[k] = base, cum
            entry[0], entry[2] = float(cum[-1] - cum[entry[1] - base]), sc.n

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
        if self.sums is not None:
            for k, more in zip(keys, added):
                base, cum = self.sums[k]
                self.sums[k] = base, np.concatenate([cum, cum[-1] + np.cumsum(more)])


class _InstanceScores:
    """The cache as the search of one test instance sees it (see `search`)."""

    def __init__(self, cache: ScoreCache, xt: np.ndarray):
        self.cache, self.xt = cache, xt

    def bounds(self, models: list, also=()) -> list:
        """The cached scores (upper bounds if records arrived since; with a window, the
        terms of the records that left it taken away first); unseen models scored, and
        when some are, unseen models of ``also`` with them while the pass holds fewer than
        ``SMALL_PASS`` models times records (a small pass pays much of its cost in fixed
        numpy calls)."""
        cache = self.cache
        entries = cache.entries
        keys = [cache.key(A, self.xt) for A in models]
        if cache.sums is not None:
            cache.trim(keys)
        unseen = [k for k in keys if k not in entries]
        if unseen:
            more = [k for k in (cache.key(A, self.xt) for A in also) if k not in entries]
            room = SMALL_PASS // max(cache.scorer.live, 1) - len(unseen)
            cache.refresh(unseen + more[: max(room, 0)])
        return [entries[k][0] for k in keys]

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
