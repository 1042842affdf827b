"""ISA's scorer, the children's side of eq. 10 in a scoring pass: for every (element, class
present) pair of a pass (`blocks.Pairs`), the sum over the children of
log(N_ijk + alpha) - log(N_ij + r_i alpha), each child's counts read from running sums of
64-bit words (`blocks.count_table`), one child at a time.

``scorer`` is the `scorer.Scorer` of the pass: its ``informative`` features, their number
of values ``r`` and its tables ``log_num`` (log(N + alpha)) and ``log_den`` (log(N + r alpha)).
"""

from __future__ import annotations

import numpy as np

from .blocks import Pairs, count_table

__all__ = ["children_terms"]


def children_terms(scorer, parent, pairs: Pairs, X, ev, ei):
    """Sum over the children of log P(x_i | z, parents) (eq. 10) for the elements (view
    ``ev``, record ``ei`` of ``X``) of a pass; ``parent[v, c]``: whether informative
    feature ``c`` is an antecedent of view ``v``'s model.

    Returns the sum for a class absent from the record's configuration so far, per
    element, and the sum for each of the ``pairs`` (element, class present). Only the
    classes present are counted: most configurations hold few classes.
    """
    kids = scorer.informative
    # Absent class: every count is 0, log(alpha) - log(r_i alpha) per child used.
    w = scorer.log_num[0] - scorer.log_den[scorer.r[kids], 0]
    seen = X[:, kids] >= 0  # (n, f)
    absent = ((seen * w) @ ~parent.T).reshape(-1).take(ei * len(parent) + ev)
    loop = np.flatnonzero(~parent.all(axis=0))  # antecedents of all models: no term
    return absent, _pair_terms(scorer, loop, parent, pairs, X, ev, ei)


def _pair_terms(scorer, children, parent, pairs: Pairs, X, ev, ei):
    """Sum over ``children`` (columns of the informative features) of
    log(N_ijk + alpha) - log(N_ij + r_i alpha) (eq. 10) for every (element, class) pair,
    over the children that are not antecedents of the pair's model and that the record
    has. One child at a time, so that the temporaries (a few per pair) stay in the
    processor's cache.
    """
    n, V = X.shape[0], len(parent)
    first, elem, last, count = pairs.first, pairs.elem, pairs.last, pairs.count
    om = ei.take(pairs.order)  # the record of each element, in the pass's order
    record, view = ei.take(elem), ev.take(elem)
    models = np.searchsorted(view, np.arange(V + 1))  # view v's pairs
    by_record = record * V + view  # a pair's cell of an (n, V) array
    features = scorer.informative[children]
    r = scorer.r[features]
    codes = X[:, features].T  # (children, n)
    free = ~parent[:, children]  # (V, children): the children of each view's model
    missing = (codes < 0).T.astype(float)  # (n, children)
    # Pairs none of whose earlier records of its class and configuration misses a child
    # have N_ij = count for every child: their denominators are summed by r_i. The
    # others (``gaps``; all pairs when they are most) read N_ij child by child below.
    incomplete = np.zeros(om.size + 1, dtype=np.int64)
    np.cumsum((codes < 0).any(axis=0).take(om), out=incomplete[1:])
    gaps = np.flatnonzero(incomplete[last + 1] > incomplete[last + 1 - count])
    gaps, gap_models = ((slice(None), models) if 2 * gaps.size > elem.size
                        else (gaps, np.searchsorted(gaps, models)))
    # A child the record misses reads N_ijk = 0 below (log(alpha)), and for the gaps
    # N_ij = 0 (log(r_i alpha)): not terms, taken back here.
    total = (missing @ free.T).reshape(-1).take(by_record) * -scorer.log_num[0]
    without = total[gaps] + ((missing * scorer.log_den[r, 0]) @ free.T).reshape(-1)[
        by_record[gaps]]
    if not isinstance(gaps, slice):
        sizes, size_of = np.unique(r, return_inverse=True)
        used = (1.0 - missing) @ (free[:, :, None] * np.eye(sizes.size)[size_of])
        used = used.transpose(2, 1, 0).reshape(sizes.size, n * V)  # per size: (n, V) cells
        for s, used_s in zip(sizes, used):
            total -= used_s.take(by_record) * scorer.log_den[s].take(count)
    total[gaps] = without
    # Counts (at most n, so b bits) side by side in a 64-bit word: the counts of ``per``
    # values of the child and, in the top field, of the records with the child observed.
    b = max(n.bit_length(), 1)
    per = 64 // b - 1
    top = np.uint64(b * per)
    mask = np.uint64((1 << b) - 1)
    # The record's value's field; a record missing the child shifts by 64, reading 0
    # (numpy's shifts by the word size or more give 0) for both counts.
    shifts = np.where(codes < 0, 64, codes % per * b).astype(np.uint64)
    offsets = np.maximum(codes, 0) // per * om.size  # the word of the record's value
    codes = np.where(codes < 0, r[:, None], codes)  # a missing value: code r_i
    tables = {ri: count_table(ri, b, per) for ri in set(r.tolist())}
    owners = [[] for _ in children]  # the views whose model each child is an antecedent of
    for i, m in zip(*np.nonzero(~free.T)):
        owners[i].append(m)
    den = np.zeros(without.size)
    for ri, code, shift, offset, owner in zip(r.tolist(), codes, shifts, offsets, owners):
        table = tables[ri]
        # Running sums restarting at each block (each block's start less the sum of the
        # block before it): a pair's counts at ``last``.
        cum = table.take(code.take(om), axis=1)
        for row in cum:
            row[first[1:]] -= np.add.reduceat(row, first)[:-1]
        cum = np.cumsum(cum, axis=1, out=cum).reshape(-1)
        at = 0 if table.shape[0] == 1 else offset.take(record)
        word = cum.take(at + last)
        if pairs.before is not None:  # sliding: less the counts before the window
            # (field by field: each field of the later sum is at least the earlier one's)
            early = pairs.before >= 0
            word[early] -= cum.take((at + pairs.before)[early])
        shift = shift.take(record)
        term = scorer.log_num.take(((word >> shift) & mask).view(np.int64))
        gap = scorer.log_den[ri].take(
            (word[gaps] >> np.maximum(shift[gaps], top)).view(np.int64))
        for m in owner:
            term[models[m]: models[m + 1]] = 0.0
            gap[gap_models[m]: gap_models[m + 1]] = 0.0
        total += term
        den += gap
    total[gaps] -= den
    return total
