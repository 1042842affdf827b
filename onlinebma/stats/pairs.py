"""Per-class pair counts: the one sufficient statistic of the tree-augmented learners.

:class:`PairCounts` holds, for records with class ``c``:

- the class counts ``N(c)``;
- per feature ``u``, the single counts ``N(c, x_u)`` over the records where ``u`` is
  observed, and their margin ``N_u(c)`` (those records per class);
- per pair of features ``u < v``, the pair table ``N(c, x_u, x_v)`` over the records where
  both are observed, and that table's own margins ``N_uv(c, x_u)``, ``N_uv(c, x_v)`` and
  ``N_uv(c)`` (equal to the single counts and class counts when nothing is missing).

A record touches ``1 + 2m + 4 m (m - 1) / 2`` cells, ``m`` its observed features.

Codes. Labels, features and each feature's values are coded as ints in order of first
appearance (:meth:`add_class`, :meth:`add_feature`, :meth:`add_value`; the names are in
``classes_``, ``features_`` and ``values_``; :meth:`class_code`, :meth:`feature_code`,
:meth:`value_code` and :meth:`known` look codes up without adding, ``n_classes``,
``n_features``, ``n_pairs`` and ``n_values`` count them, and ``version`` changes whenever one
is added, so callers know when what they derived is stale). Pair ``(u, v)``, ``u < v``, has the id
``v (v - 1) / 2 + u`` (:func:`pair_id`, inverse :func:`pairs_of`), so the pairs of a new
feature come last.

Members. One instance can hold the counts of ``n_members`` learners that see the same records
with different weights (the rates of ``ModelAveragedTAN(decay="auto")``, one member for a
fixed decay): they share the codes and the layout, and class ``c``'s counts of member ``r``
are row ``c R + r`` (``R`` = ``n_members``). :meth:`add` counts a record for every member at
once (one weight each), :meth:`scale` rescales one member or all, :meth:`gather` reads a
record's columns as ``(R, K, L)``, and the readers (:meth:`member_table`,
:meth:`class_counts`, :meth:`single`, :meth:`pair`) take the member to read (default 0, the
only one of a single learner).

Layout. All counts are one float array ``counts_`` of shape ``(K R, columns)``, ``R`` rows per
class (one row per class for a single member), stored by column (a view of a C-ordered
``(columns, K R)`` array: the ``K R`` counts of a column lie together, so that a record's
few hundred columns of a wide table are read as that many short blocks, not ``K R`` times
as many scattered cells). Column 0 is ``N(c)``; feature ``u`` owns ``cap_u
+ 1`` columns from ``single_offsets_[u]`` (its values, then its margin); pair ``p = (u, v)``
owns ``cap_u cap_v + cap_u + cap_v + 1`` columns from ``pair_offsets_[p]`` (the joint, value
``x_u`` major, then the two margins, then the pair's class count). ``cap_u`` (``capacity_``) is
a power of two at least the number of values; the spare cells stay 0. A new value past the
capacity, or a new feature, lays the array out again (amortised: capacities double), a new
class adds its rows. ``column_pairs_`` and ``column_roles_`` describe every column (``-1`` /
:data:`CLASS`, :data:`VALUE`, :data:`MARGIN`, :data:`JOINT`, :data:`PAIR_U`, :data:`PAIR_V`,
:data:`PAIR_CLASS`).

One record is one vector of column indices (:meth:`record_columns`): learning it is one
fancy-indexed add to its class's rows (:meth:`add`), reading it for every class and member
one gather (:meth:`gather`). :meth:`learn_many` counts a coded int matrix with ``bincount``;
:meth:`merge` adds another instance's counts (its codes remapped); :meth:`scale` multiplies
every count (forgetting). :meth:`single` and :meth:`pair` read one feature's or one pair's
tables as arrays in value-code order.

>>> import numpy as np
>>> pc = PairCounts()
>>> for x, y in [({"a": 0, "b": 1}, "no"), ({"a": 1, "b": 1}, "yes"), ({"a": 1}, "yes")]:
...     c = pc.add_class(y)
...     codes = np.array([pc.add_feature(f) for f in x])
...     values = np.array([pc.add_value(u, v) for u, v in zip(codes, x.values())])
...     pc.add(c, pc.record_columns(codes, values), 1.0)
>>> pc.classes_, pc.features_, pc.values_
(['no', 'yes'], ['a', 'b'], [[0, 1], [1]])
>>> joint, margin_a, margin_b, n = pc.pair(0, 1)
>>> joint[:, :, 0].tolist(), margin_a.tolist(), n.tolist()
([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
>>> counts, margin = pc.single(0)
>>> counts.tolist(), margin.tolist(), pc.class_counts().tolist()
([[1.0, 0.0], [0.0, 2.0]], [1.0, 2.0], [1.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from .. import tuning
from ..caching import BoundedCache
from ..validation import check_int
from .pair_ids import pair_cells, pair_id, pairs_of

__all__ = ["CLASS", "JOINT", "MARGIN", "PAIR_CLASS", "PAIR_U", "PAIR_V",
           "VALUE", "PairCounts", "pair_id", "pairs_of"]

CLASS, VALUE, MARGIN, JOINT, PAIR_U, PAIR_V, PAIR_CLASS = range(7)



class PairCounts:
    """Class, single and pair counts of a stream, coded and laid out in one array.

    See the module docstring for the meaning and layout of the public attributes.

    Parameters
    ----------
    n_members
        Learners counted side by side with their own weights (module docstring, *Members*).
    """

    def __init__(self, n_members: int = 1):
        check_int("n_members", n_members, 1)
        self.n_members = n_members
        self.classes_: list = []
        self.features_: list = []
        self.values_: list = []  # per feature: its values in code order
        self.capacity_ = np.zeros(0, dtype=np.int64)
        self._cells = np.zeros((1, 0))  # (columns, K R): counts_ transposed
        self.single_offsets_ = np.zeros(0, dtype=np.int64)
        self.pair_offsets_ = np.zeros(0, dtype=np.int64)
        self.column_pairs_ = np.full(1, -1, dtype=np.int64)
        self.column_roles_ = np.full(1, CLASS, dtype=np.int64)
        self._class_codes: dict = {}
        self._feature_codes: dict = {}
        self._value_codes: list = []
        self._laid_out = np.zeros(0, dtype=np.int64)  # capacities of the current layout
        # observed feature codes -> their columns' plan (see _plan)
        self._plans = BoundedCache("PAIR_PLAN_CELLS", weigh="cells")
        self._starts: dict = {}  # class code -> its rows in counts_ (see add; one per class)
        self._version = 0
        self._n_values = (-1, None)  # (version, n_values) kept by n_values
        self._dirty = False  # capacities or features changed since the last layout

    def __getstate__(self):
        return {**self.__dict__, "_starts": {}}  # the plans pickle empty by themselves

    @property
    def counts_(self) -> np.ndarray:
        """Every count, ``(K R, columns)`` (module docstring, *Layout*): a view of the
        storage by column, written through by ``+=`` and the like."""
        return self._cells.T

    # ------------------------------------------------------------------ codes

    @property
    def n_classes(self) -> int:
        return len(self.classes_)

    @property
    def n_features(self) -> int:
        return len(self.features_)

    @property
    def n_pairs(self) -> int:
        return pair_id(0, len(self.features_))

    @property
    def n_values(self) -> np.ndarray:
        """The number of values of each feature, in feature-code order (read only; kept
        until a feature or value is added: a record's predictions read it)."""
        version, out = self._n_values
        if version != self._version:
            out = np.array([len(v) for v in self.values_], dtype=np.int64)
            out.flags.writeable = False
            self._n_values = (self._version, out)
        return out

    def class_code(self, label) -> int:
        """The code of ``label``, or -1."""
        return self._class_codes.get(label, -1)

    def feature_code(self, feature) -> int:
        """The code of ``feature``, or -1."""
        return self._feature_codes.get(feature, -1)

    def value_code(self, u: int, value) -> int:
        """The code of ``value`` of the feature coded ``u``, or -1."""
        return self._value_codes[u].get(value, -1)

    def known(self, pairs) -> list:
        """``[(u, value code)]`` of the ``(feature, value)`` pairs whose feature and value are
        both known (the others are left out)."""
        features, values = self._feature_codes, self._value_codes
        out = []
        for f, v in pairs:
            u = features.get(f)
            if u is not None:
                c = values[u].get(v)
                if c is not None:
                    out.append((u, c))
        return out

    def add_class(self, label) -> int:
        """The code of ``label``, new rows of zeros (one per member) if it is new."""
        code = self._class_codes.get(label)
        if code is None:
            code = self._class_codes[label] = len(self.classes_)
            self.classes_.append(label)
            self._version += 1
            self._cells = np.hstack([self._cells,
                                     np.zeros((self._cells.shape[0], self.n_members))])
        return code

    def add_feature(self, feature) -> int:
        """The code of ``feature`` (new features get their columns at the next count)."""
        code = self._feature_codes.get(feature)
        if code is None:
            code = self._feature_codes[feature] = len(self.features_)
            self.features_.append(feature)
            self.values_.append([])
            self._value_codes.append({})
            self.capacity_ = np.append(self.capacity_, 2)
            self._version += 1
            self._dirty = True
        return code

    def add_value(self, u: int, value) -> int:
        """The code of ``value`` of feature ``u`` (capacities double when full)."""
        codes = self._value_codes[u]
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(self.values_[u])
            self.values_[u].append(value)
            self._version += 1
            while self.capacity_[u] <= code:
                self.capacity_[u] *= 2
                self._dirty = True
        return code

    # ----------------------------------------------------------------- layout

    def _layout(self) -> None:
        """Lay the columns out for the current features and capacities, moving the counts."""
        if not self._dirty:
            return
        cap = self.capacity_
        old = self._laid_out
        n = len(cap)
        u_of, v_of = pairs_of(n)
        single = 1 + np.concatenate([[0], np.cumsum(cap + 1)])
        pair_sizes = cap[u_of] * cap[v_of] + cap[u_of] + cap[v_of] + 1
        pair = single[-1] + np.concatenate([[0], np.cumsum(pair_sizes)])
        width = int(pair[-1])
        new = np.zeros((width, self._cells.shape[1]))
        # the counts of the old layout, cell by cell: class counts, singles, pairs
        src, dst = [np.zeros(1, dtype=np.int64)], [np.zeros(1, dtype=np.int64)]
        for u in range(len(old)):
            src.append(self.single_offsets_[u] + np.append(np.arange(old[u]), old[u]))
            dst.append(single[u] + np.append(np.arange(old[u]), cap[u]))
        n_old = pair_id(0, len(old))
        if n_old:
            ou, ov = old[u_of[:n_old]], old[v_of[:n_old]]
            cells, (pid, local) = pair_cells(ou, ov, cap[u_of[:n_old]], cap[v_of[:n_old]])
            src.append(self.pair_offsets_[pid] + local)
            dst.append(pair[pid] + cells)
        new[np.concatenate(dst)] = self._cells[np.concatenate(src)]
        self._cells = new
        self.single_offsets_ = single[:-1]
        self.pair_offsets_ = pair[:-1]
        roles = np.full(width, CLASS, dtype=np.int64)
        pairs = np.full(width, -1, dtype=np.int64)
        for u in range(n):
            roles[single[u]:single[u] + cap[u]] = VALUE
            roles[single[u] + cap[u]] = MARGIN
        if len(u_of):
            cu, cv = cap[u_of], cap[v_of]
            _, (pid, local) = pair_cells(cu, cv, cu, cv)
            cols = pair[pid] + local
            pairs[cols] = pid
            cu, cv = cu[pid], cv[pid]
            roles[cols] = np.select([local < cu * cv, local < cu * cv + cu,
                                     local < cu * cv + cu + cv], [JOINT, PAIR_U, PAIR_V],
                                    PAIR_CLASS)
        self.column_pairs_, self.column_roles_ = pairs, roles
        self._laid_out = cap.copy()
        self._plans.clear()
        self._dirty = False

    @property
    def version(self) -> int:
        """Changes whenever a class, feature or value is added (codes, domains or layout
        change): what a caller derived from them is stale."""
        return self._version

    def _plan(self, codes: np.ndarray):
        """``(template, first, factor, second, design)`` of a set of observed features: the
        columns of a record are ``template + v[first] * factor + v[second]`` with ``v`` its
        value codes followed by a 0, or ``template + values @ design`` for at most
        :data:`~onlinebma.tuning.DESIGN_FEATURES` features (cached per set until the layout
        changes)."""
        key = codes.tobytes()
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        m = len(codes)
        cap = self.capacity_
        single = self.single_offsets_[codes]
        i, j = np.triu_indices(m, 1)
        u, v = codes[i], codes[j]
        base = self.pair_offsets_[pair_id(u, v)]
        cu, cv = cap[u], cap[v]
        after = base + cu * cv
        p = len(i)
        none, zeros = np.full(m, m), np.zeros(p, dtype=np.int64)
        template = np.concatenate([[0], single, single + cap[codes], base, after, after + cu,
                                   after + cu + cv])
        first = np.concatenate([[m], np.arange(m), none, i, i, zeros + m, zeros + m])
        factor = np.concatenate([[0], np.ones(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
                                 cv, zeros + 1, zeros, zeros])
        second = np.concatenate([[m], none, none, j, zeros + m, j, zeros + m])
        design = None
        if m <= tuning.DESIGN_FEATURES:  # one int product per record instead of two gathers
            design = np.zeros((m + 1, len(template)), dtype=np.int64)
            at = np.arange(len(template))
            np.add.at(design, (first, at), factor)
            np.add.at(design, (second, at), 1)
            design = design[:m].copy()  # row m multiplies the appended 0
        return self._plans.put(key, (template, first, factor, second, design))

    def record_columns(self, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The columns one record touches: ``codes`` its observed features' codes in
        increasing order, ``values`` their value codes (or a matrix ``(rows, m)`` of records
        observing the same features: then one row of columns per record).

        With ``m = len(codes)`` and ``P = m (m - 1) / 2`` the result is, in this order:
        ``[0]`` (class count), ``m`` value cells, ``m`` feature margins, then for the pairs
        ``(codes[i], codes[j])``, ``i < j`` in ``np.triu_indices(m, 1)`` order, ``P`` joint
        cells, ``P`` cells of the first feature's pair margin, ``P`` of the second's and
        ``P`` pair class counts.
        """
        self._layout()
        template, first, factor, second, design = self._plan(codes)
        if design is not None and values.ndim == 1:
            return template + values @ design
        v = np.concatenate([values, np.zeros((*values.shape[:-1], 1), dtype=np.int64)], axis=-1)
        return template + v[..., first] * factor + v[..., second]

    # --------------------------------------------------------------- counting

    def add(self, c: int, columns: np.ndarray, weight) -> None:
        """Count one record of class code ``c`` at its ``columns`` for every member:
        ``weight`` a float (every member alike) or one weight per member."""
        self._layout()
        cells = self._cells
        r = self.n_members
        rows = self._starts.get(c)
        if rows is None:  # class c's rows, as a column of flat offsets
            rows = self._starts[c] = np.arange(c * r, (c + 1) * r)[:, None]
        flat = (columns * cells.shape[1] + rows).ravel()
        # counts_[c R:(c + 1) R, columns] += weight, as a take and a put (cheaper)
        cells.put(flat, cells.take(flat).reshape(r, -1) + np.reshape(weight, (-1, 1)))

    def gather(self, columns: np.ndarray) -> np.ndarray:
        """The counts of ``columns`` (:meth:`record_columns`) of every member and class, an
        array ``(R, K, L)`` (each row of ``L`` contiguous, as the reductions over it expect:
        their rounding follows the layout)."""
        self._layout()
        taken = self._cells.take(columns, axis=0)  # (L, K R): one block per column
        rows = np.ascontiguousarray(taken.T)  # (K R, L)
        return rows.reshape(self.n_classes, self.n_members, -1).transpose(1, 0, 2)

    def member_table(self, member: int = 0) -> np.ndarray:
        """Member ``member``'s counts, ``(K, columns)`` in the layout (a view: read only)."""
        self._layout()
        return self.counts_[member::self.n_members]

    def learn_many(self, codes: np.ndarray, y: np.ndarray, weight: float = 1.0) -> None:
        """Count a batch: ``codes`` an int matrix ``(rows, features)`` of value codes, -1
        where missing (columns in feature-code order, possibly fewer than the features),
        ``y`` the rows' class codes; every member counts it with ``weight``."""
        self._layout()
        codes = np.asarray(codes, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        rows, n = codes.shape
        k, width = self.n_classes, self.counts_.shape[1]
        cap = self.capacity_
        present = codes >= 0
        cells = [np.zeros(rows, dtype=np.int64)]
        keep = [np.ones(rows, dtype=bool)]
        for u in range(n):
            s = self.single_offsets_[u]
            cells += [s + codes[:, u], np.full(rows, s + cap[u])]
            keep += [present[:, u], present[:, u]]
        flat = [c * k + y for c in cells]  # column-major cell ids: column * K + class
        total = np.bincount(np.concatenate(flat)[np.concatenate(keep)], minlength=k * width)
        step = max(1, tuning.PAIR_CHUNK_CELLS // max(1, 4 * pair_id(0, n)))
        for start in range(0, rows, step):
            block, yb = codes[start:start + step], y[start:start + step]
            ids = []
            for v in range(1, n):
                both = (block[:, :v] >= 0) & (block[:, [v]] >= 0)
                r, uu = np.nonzero(both)
                base = self.pair_offsets_[pair_id(uu, v)]
                cu, cv = cap[uu], cap[v]
                xu, xv = block[r, uu], block[r, v]
                after = base + cu * cv
                yr = yb[r]
                for col in (base + xu * cv + xv, after + xu, after + cu + xv, after + cu + cv):
                    ids.append(col * k + yr)
            if ids:
                total += np.bincount(np.concatenate(ids), minlength=k * width)
        total = weight * total.reshape(width, k).T
        for r in range(self.n_members):
            self.member_table(r)[:] += total

    def scale(self, factor: float, member: int | None = None) -> None:
        """Multiply every count of ``member`` (``None``: of every member) by ``factor``."""
        if member is None:
            self._cells *= factor
        else:
            self.member_table(member)[:] *= factor

    def merge(self, other: PairCounts) -> None:
        """Add ``other``'s counts to these, member by member (its classes, features and values
        coded here, new ones after these); both must have the same number of members."""
        if other.n_members != self.n_members:
            raise ValueError(f"cannot merge counts of {other.n_members} members into counts of "
                             f"{self.n_members}")
        cmap = np.array([self.add_class(c) for c in other.classes_], dtype=np.int64)
        fmap = [self.add_feature(f) for f in other.features_]
        vmaps = [np.array([self.add_value(u, v) for v in values], dtype=np.int64)
                 for u, values in zip(fmap, other.values_)]
        self._layout()
        if not len(cmap):
            return
        for member in range(self.n_members):
            self._merge_member(other, member, cmap, fmap, vmaps)

    def _merge_member(self, other: PairCounts, member: int, cmap, fmap, vmaps) -> None:
        """Add ``other``'s counts of ``member`` (codes mapped by :meth:`merge`)."""
        table = self.member_table(member)  # a view: the adds below write into counts_
        rows = cmap[:, None]
        table[rows, [0]] += other.class_counts(member)[:, None]
        for u, (tu, vm) in enumerate(zip(fmap, vmaps)):
            counts, margin = other.single(u, member)
            s = self.single_offsets_[tu]
            table[rows, s + vm] += counts
            table[cmap, s + self.capacity_[tu]] += margin
        for v in range(other.n_features):
            for u in range(v):
                a, b = fmap[u], fmap[v]
                joint, mu, mv, n = other.pair(u, v, member)
                if a > b:  # the pair is ordered the other way round here
                    a, b, joint, mu, mv = b, a, joint.transpose(0, 2, 1), mv, mu
                    va, vb = vmaps[v], vmaps[u]
                else:
                    va, vb = vmaps[u], vmaps[v]
                o = self.pair_offsets_[pair_id(a, b)]
                ca, cb = self.capacity_[a], self.capacity_[b]
                cols = o + (va[:, None] * cb + vb[None, :]).ravel()
                table[rows, cols] += joint.reshape(len(cmap), -1)
                table[rows, o + ca * cb + va] += mu
                table[rows, o + ca * cb + ca + vb] += mv
                table[cmap, o + ca * cb + ca + cb] += n

    # ---------------------------------------------------------------- reading

    def class_counts(self, member: int = 0) -> np.ndarray:
        """``N(c)`` of ``member``, shape ``(K,)``."""
        return self.member_table(member)[:, 0].copy()

    def single(self, u: int, member: int = 0):
        """``(N(c, x_u), N_u(c))`` of feature ``u`` and ``member``: shapes ``(K, r_u)`` and
        ``(K,)``."""
        table = self.member_table(member)
        s, r = self.single_offsets_[u], len(self.values_[u])
        return table[:, s:s + r].copy(), table[:, s + self.capacity_[u]].copy()

    def pair(self, u: int, v: int, member: int = 0):
        """``(N(c, x_u, x_v), N_uv(c, x_u), N_uv(c, x_v), N_uv(c))`` of features ``u != v``
        and ``member``, shapes ``(K, r_u, r_v)``, ``(K, r_u)``, ``(K, r_v)`` and ``(K,)``: the
        pair table over the records where both are observed and its margins, in the order
        asked."""
        if u > v:
            joint, mv, mu, n = self.pair(v, u, member)
            return joint.transpose(0, 2, 1), mu, mv, n
        table = self.member_table(member)
        o = self.pair_offsets_[pair_id(u, v)]
        cu, cv = self.capacity_[u], self.capacity_[v]
        ru, rv = len(self.values_[u]), len(self.values_[v])
        k = table.shape[0]
        joint = table[:, o:o + cu * cv].reshape(k, cu, cv)[:, :ru, :rv].copy()
        a = o + cu * cv
        return (joint, table[:, a:a + ru].copy(), table[:, a + cu:a + cu + rv].copy(),
                table[:, a + cu + cv].copy())
