"""ISA's cache of model scores, kept across test instances and extended as records arrive.

With the full coding the score of ``M(A)`` depends on which features are in ``A`` only, so it
is cached per ``A``; with the indicator coding per ``A`` and the test instance's values on
``A``. A cached score remembers which records it covers (positions ``first .. total - 1``).
Eq. 9 is a sum over the records in arrival order, so when records are appended a score is
extended by the new records' terms —
only when the search asks for it (`search`: a score that is not brought up to date is an
upper bound on the current one). Each new record's terms come from the bitset index, for all
the models being extended at once, so extending costs the same per new record whether one or
a thousand records arrived. A score that misses many records (more than ``tuning.FRESH_RECORDS``
plus ``FRESH_FRACTION`` of all) is computed afresh instead, which is then cheaper: so the cost
per new record never jumps up as more records arrive between predictions. The models averaged
for recent test instances (``hot``) are extended together before the next search.

With a window, ``hot`` holds every model the recent searches saw (their bounds too) within
`tuning.KEEP_SLACK` nats below their margin, not only those averaged. Without a window a stale
score stays where it was (a bound that only the new terms would lower), so a queued model the
search did not need stays below the models it took; with one, taking away the evicted terms
*raises* a stale bound by about one term's size per record, so after some tens of records the
models just below the search's frontier climb back into it and each needs a catch-up pass of
``W`` records and more. Extended by the one new record each, in one call for all
(`Scorer.record_terms`), they never fall behind, which costs less than the catch-up passes
(``python -m experiments bench-isa``, docs/isa.md). Which scores are brought up to date, and
when, changes neither the models averaged nor their scores: phase 1 makes every model within
``margin`` of the best exact before it joins ``R``, and phase 2 chooses by exact scores among the
queued models whose bound passes its threshold (see `search`); only which negligible models fill
``R``'s tail can differ, as it already could with the cache's history.

With a window the score is the sliding eq. 9 (`scorer`): a record's term counts the
``window`` records before it, so it never changes once computed. The cache of a windowed
learner keeps each score's terms, one per record covered (a flat array of floats); when records
leave the window, their terms are taken away (`ScoreCache.trim`: the evicted terms summed and
dropped from the array's front, no scoring), and what is left is again the score
over the live records it covers — an upper bound on the current score, brought up to date by
the new records' terms as without a window. So a record that arrives or leaves costs the same
per cached model, one term, whatever the window.
"""

from __future__ import annotations

from array import array

import numpy as np

from .. import tuning
from .scorer import Scorer

__all__ = ["ScoreCache"]


class ScoreCache:
    """``{key: [log score, first, total]}`` for one `Scorer`: the score covers the records at
    positions ``first .. total - 1``. ``window``: the scorer's records may slide; the terms
    of each score are then kept too: ``terms[key][i]`` is the term of the record at ``first +
    i`` (an ``array("d")``, 8 bytes a term; plain Python per key, as a trim or an extension
    touches a few terms of each score and numpy's cost per call would dominate)."""

    def __init__(self, scorer: Scorer, coding: str, window: bool = False):
        self.scorer = scorer
        self.coding = coding
        self.entries: dict = {}
        self.terms: dict | None = {} if window else None
        self.hot: set = set()  # keys averaged by recent searches
        self.hot_at = 0  # records when the hot keys were last brought up to date

    def __len__(self):
        return len(self.entries)

    @property
    def nbytes(self) -> int:
        """About 100 bytes per cached score, plus the terms kept."""
        kept = 0 if self.terms is None else sum(8 * len(t) for t in self.terms.values())
        return 100 * len(self.entries) + kept

    def key(self, A: tuple, xt: np.ndarray):
        return A if self.coding == "full" else (A, tuple(int(xt[j]) for j in A))

    def _too_stale(self, entry) -> bool:
        """Whether a score misses so many records that scoring it afresh is cheaper (without a
        window), or scoring the records it misses in one pass (with one)."""
        sc = self.scorer
        if self.terms is None:
            return sc.n - entry[2] > tuning.FRESH_RECORDS + tuning.FRESH_FRACTION * sc.live
        return sc.n - entry[2] > tuning.WINDOW_EXTEND_RECORDS

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
        entries, terms, start = self.entries, self.terms, self.scorer.start
        cached = []
        for k in keys:
            entry = entries.get(k)
            if entry is None:
                continue
            if entry[1] < start:
                if entry[2] <= start:
                    del entries[k], terms[k]
                    continue
                kept, gone = terms[k], start - entry[1]
                entry[0] -= sum(kept[:gone])
                entry[1] = start
                del kept[:gone]
            cached.append(k)
        return cached

    def refresh(self, keys: list) -> list:
        """Bring the scores of ``keys`` up to date (scoring unseen ones); returns them."""
        sc, n = self.scorer, self.scorer.n
        keys = list(keys)
        unique = list(dict.fromkeys(keys))
        if self.terms is not None:
            self.trim(unique)
        fresh, stale, behind = [], [], []
        for k in unique:
            entry = self.entries.get(k)
            if entry is None or (self.terms is None and self._too_stale(entry)):
                fresh.append(k)
            elif entry[2] < n:
                (behind if self.terms is not None and self._too_stale(entry) else stale).append(k)
        if behind:
            self._catch_up(behind)
        if fresh:
            models = [self._model(k) for k in fresh]
            args = [A for A, _ in models], self.coding, [v for _, v in models]
            if self.terms is None:
                scores = sc.log_scores(*args)
            else:
                terms = sc.log_scores(*args, per_record=True)
                scores = terms.sum(axis=1)
                for k, row in zip(fresh, terms):
                    self.terms[k] = kept = array("d")
                    kept.frombytes(row.tobytes())
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
            self.terms[k].frombytes(more.tobytes())
            entry[0] += float(more.sum())
            entry[2] = sc.n

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
                self.terms[k].extend(more)


class _InstanceScores:
    """The cache as the search of one test instance sees it (see `search`). The scorer's
    records do not change during a search: its positions are read once."""

    def __init__(self, cache: ScoreCache, xt: np.ndarray):
        self.cache, self.xt = cache, xt
        self.full = cache.coding == "full"
        self.span = [cache.scorer.start, cache.scorer.n]  # an exact score's [first, total]

    def _keys(self, models) -> list:
        return list(models) if self.full else [self.cache.key(A, self.xt) for A in models]

    def bounds(self, models: list, also=()) -> list:
        """The cached scores (upper bounds if records arrived since; with a window, the
        terms of the records that left it taken away first); unseen models scored, and
        when some are, unseen models of ``also`` with them while the pass holds fewer than
        ``tuning.SMALL_PASS`` models times records (a small pass pays much of its cost in fixed
        numpy calls)."""
        cache = self.cache
        entries = cache.entries
        keys = self._keys(models)
        if cache.terms is not None:
            cache.trim(keys)
        unseen = [k for k in keys if k not in entries]
        if unseen:
            more = [k for k in self._keys(also) if k not in entries]
            room = tuning.SMALL_PASS // max(cache.scorer.live, 1) - len(unseen)
            cache.refresh(unseen + more[: max(room, 0)])
        return [entries[k][0] for k in keys]

    def exact(self, A: tuple) -> bool:
        entry = self.cache.entries.get(A if self.full else self.cache.key(A, self.xt))
        return entry is not None and entry[1:] == self.span

    def refresh(self, models: list) -> list:
        return self.cache.refresh(self._keys(models))

    def keep(self, models):
        """With a window: mark ``models`` to be extended by the next records before the next
        search (see the module); without one, nothing."""
        if self.cache.terms is not None:
            self.cache.hot.update(self._keys(models))

    def predict(self, models: list) -> np.ndarray:
        """The models' class distributions for the instance; they are marked hot."""
        self.cache.hot.update(self._keys(models))
        return self.cache.scorer.predict(models, None, self.xt)
