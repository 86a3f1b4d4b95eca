"""The BM25 index: an inverted index scored at query time, exact top-n with safe pruning.

Scoring is BM25 with the non-negative IDF ``ln((N+1)/n_t)`` (rank-bm25's ``BM25Plus`` with
``delta=0`` is the reference)::

    score(d) = sum over query terms t of  qf_t * idf_t * (k1+1) * tf_td / (tf_td + k1*(1-b+b*dl_d/avgdl))

Nothing depending on N or avgdl is stored, so adding a document costs only its own terms and the
next query is exact. The postings are flat arrays, not an object per term: a CSR-like *base*
(``ptr`` int64 offsets per term id into ``ids`` int32 document ids, ascending per term, and
``tfs`` uint8 term frequencies, widened if a count ever exceeds 255: 5 bytes a posting) and a
*tail* of the documents added since, in arrival order (term id, document id, tf: 9 bytes a
posting), merged into the base once it holds more than ``max(2**16, base/64)`` postings (a bulk
add merges at once), or by a query when the index is small or the tail a quarter of the base. A
query gathers its terms' slices of the base and their tail entries.

``top(query, n)`` returns the same n documents, in the same order, as sorting ``scores(query)``
(higher first, ties by lower id), with the exact scores, but does less work: it sums float32
weights ``idf*(k1+1)*tf/(tf+norm)`` (cached per term until the next add; a term in a quarter of
the documents or more keeps them as one dense array), taking terms rarest first (from 50k
documents). Once the n-th best partial sum is above what the remaining terms could still add to
any document (each term's largest weight), documents outside the postings taken cannot reach the
top n; the few whose partial sum plus that bound comes within the float32 margin of the n-th
best are the finalists, scored exactly in the order and arithmetic of ``scores``. When that
point is not reached the full scores are used.
"""

from __future__ import annotations

import ctypes
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import numpy as np

__all__ = ["BM25Index", "release_heap", "top_n"]

_TF_DTYPES = (np.uint8, np.uint16, np.uint32)
# At most this many finalists are scored one by one from their tokens (else from the postings).
_FINALISTS_MAX = 64
_FINALISTS_SEARCH_MAX = 4096
# Below this many documents every posting of the query is summed in one pass (no pruning).
_PRUNE_MIN_DOCS = 50_000
# Postings of the rarest taken terms whose documents give the pruning threshold.
_SAMPLE = 20_000
# Up to this many postings in all, the first query after a change weighs every term in one pass.
_EAGER_POSTINGS = 1_000_000
# A term in at least 1/this of the documents caches its weights as one dense array.
_DENSE_DIV = 4
# With at most this many terms left, finalists get their weights by binary search.
_REFINE_TERMS = 8
_BULK_CHUNK = 20_000


_NO_IDS = np.empty(0, dtype=np.int32)
_NO_TFS = np.empty(0, dtype=np.uint8)
# The tail may hold this many postings (or 1/64 of the base's) before it is merged into the base.
_TAIL_MIN = 1 << 16
_TAIL_DIV = 64
# A query merges the tail first when the whole index holds at most this many postings (a merge then
# costs well under a millisecond, less than gathering each query term's tail entries: with one
# add between queries, as a role memory in a long-lived process sees it, the tail otherwise grew
# with every lesson and so did each query), or when the tail is at least 1/_QUERY_MERGE_DIV of
# the base (so an index the queries see keeps its tail small, at an amortised cost per posting).
_QUERY_MERGE_MAX = 1 << 17
_QUERY_MERGE_DIV = 4


def _tf_dtype(top: int) -> np.dtype:
    for dtype in _TF_DTYPES:
        if top <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"a term occurs {top} times in one document")


def _wider(a: np.dtype, b: np.dtype) -> np.dtype:
    return a if a.itemsize >= b.itemsize else b


class _Term:
    """One known query term: its postings (views of the flat arrays, ids ascending) and weights."""

    __slots__ = ("term", "tid", "qf", "c", "n", "ids", "tfs", "s", "w", "w_max", "dense")

    def __init__(self, term: str, tid: int, qf: int, c: float, n: int, ids: np.ndarray, tfs: np.ndarray,
                 s: int) -> None:
        self.term, self.tid, self.qf, self.c, self.n, self.ids, self.tfs = term, tid, qf, c, n, ids, tfs
        self.s = s  # where its postings start in the base (all of them are there when the tail is empty)
        self.w: np.ndarray | None = None
        self.w_max = 0.0
        self.dense = False


class BM25Index:
    """Inverted index with BM25 (IDF ln((N+1)/n_t), delta 0) computed at query time.

    Storage: the *base*, one CSR block (``ptr`` offsets per term id into ``ids``/``tfs``), and the
    *tail*, the postings of documents added since the base was last rebuilt, in arrival order
    (``_tail_terms``/``_tail_ids``/``_tail_tfs``). A term's postings are its base slice followed by
    its tail entries (ids ascending). The tail is merged into the base once it outgrows
    ``max(_TAIL_MIN, base/_TAIL_DIV)`` postings, so a query scans at most that much of it.
    """

    def __init__(self, k1: float, b: float) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.vocab: dict[str, int] = {}
        self.ptr = np.zeros(1, dtype=np.int64)  # base offsets of term ids 0 .. len(ptr) - 2
        self.ids = _NO_IDS
        self.tfs = _NO_TFS
        self._tail_terms = _NO_IDS
        self._tail_ids = _NO_IDS
        self._tail_tfs = _NO_TFS
        self._tail_n = 0
        self._df = np.zeros(0, dtype=np.int32)  # documents per term id (capacity >= len(vocab))
        self.doc_len = np.empty(64, dtype=np.int32)
        self.n_docs = 0
        self.total_len = 0
        self.n_postings = 0
        self._norm: np.ndarray | None = None  # k1*(1-b+b*dl/avgdl), valid for n_docs
        self._version = 0  # bumped by every add: cached weights are for one version
        self._w: dict[int, tuple[np.ndarray, float, bool]] = {}  # tid -> (weights, max, dense) of _w_version
        # a small index weighs every term at once: flat weights aligned with the base, each term's
        # maximum, and the dense arrays of the common terms (in _w)
        self._w_flat: np.ndarray | None = None
        self._w_top: np.ndarray | None = None
        self._w_version = -1
        # postings scored exactly (no weights cached) by small-index queries since the last add
        self._direct_version = -1
        self._direct_spent = 0

    @classmethod
    def from_arrays(cls, k1: float, b: float, terms: list[str], ptr: np.ndarray, ids: np.ndarray,
                    tfs: np.ndarray, doc_len: np.ndarray) -> BM25Index:
        """An index over stored base arrays (``ptr`` int64 of len(terms)+1, every term with postings)."""
        index = cls(k1, b)
        index.vocab = {t: i for i, t in enumerate(terms)}
        index.ptr, index.ids, index.tfs = ptr.astype(np.int64, copy=False), ids.astype(np.int32, copy=False), tfs
        index._df = np.diff(index.ptr).astype(np.int32)
        index.doc_len = doc_len.astype(np.int32, copy=False)
        index.n_docs = len(doc_len)
        index.total_len = int(doc_len.sum())
        index.n_postings = len(ids)
        return index

    # ------------------------------------------------------------------ building
    def _grow_docs(self, k: int) -> None:
        need = self.n_docs + k
        if need > len(self.doc_len):
            grown = np.empty(max(need, 2 * len(self.doc_len)), dtype=np.int32)
            grown[: self.n_docs] = self.doc_len[: self.n_docs]
            self.doc_len = grown

    def _grow_terms(self) -> None:
        need = len(self.vocab)
        if need > len(self._df):
            grown = np.zeros(max(need, 2 * len(self._df), 64), dtype=np.int32)
            grown[: len(self._df)] = self._df
            self._df = grown

    def _tail_room(self, extra: int, dtype: np.dtype) -> None:
        n = self._tail_n
        need = n + extra
        dtype = _wider(self._tail_tfs.dtype, dtype)
        if need <= len(self._tail_ids) and dtype == self._tail_tfs.dtype:
            return
        cap = max(need, 2 * len(self._tail_ids), 256) if need > len(self._tail_ids) else len(self._tail_ids)
        for name, dt in (("_tail_terms", np.int32), ("_tail_ids", np.int32), ("_tail_tfs", dtype)):
            grown = np.empty(cap, dtype=dt)
            grown[:n] = getattr(self, name)[:n]
            setattr(self, name, grown)

    def _changed(self) -> None:
        self._norm = None
        self._version += 1

    def add(self, tokens: Sequence[str]) -> None:
        doc_id = self.n_docs
        self._grow_docs(1)
        self.doc_len[doc_id] = len(tokens)
        self.total_len += len(tokens)
        self.n_docs += 1
        self._changed()
        counts = Counter(tokens)
        if not counts:
            return
        vocab = self.vocab
        tids = []
        for term in counts:  # first-occurrence order: new terms get the next ids
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(vocab)
            tids.append(tid)
        tfs = list(counts.values())
        self._grow_terms()
        k, n = len(tids), self._tail_n
        top = max(tfs)
        self._tail_room(k, self._tail_tfs.dtype if top <= 255 else _tf_dtype(top))
        self._tail_terms[n : n + k] = tids
        self._tail_ids[n : n + k] = doc_id
        self._tail_tfs[n : n + k] = tfs
        self._tail_n += k
        self._df[tids] += 1  # a document's terms are distinct
        self.n_postings += k
        if self._tail_n > max(_TAIL_MIN, len(self.ids) // _TAIL_DIV):
            self.compact()

    def add_many(self, token_lists: Iterable[Sequence[str]]) -> None:
        """Add many documents at once, in chunks, with numpy doing the per-posting work.

        Each document's tokens become term ids (C ints in an ``array``) as soon as it arrives, so
        no chunk of token lists is ever held (only one document's strings are alive at a time).
        Each chunk becomes a block of postings sorted by term; at the end the blocks go to the
        tail (few) or are merged with the base in one pass (many).
        """
        vocab = self.vocab
        get = vocab.get
        blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        chunks = 0
        ids, lens = array("i"), array("i")
        for tokens in token_lists:
            tids = list(map(get, tokens))
            if None in tids:  # new terms: ids in first-occurrence order, as add() gives them
                for term in tokens:
                    if term not in vocab:
                        vocab[term] = len(vocab)
                tids = list(map(vocab.__getitem__, tokens))
            ids.extend(tids)
            lens.append(len(tids))
            if len(lens) == _BULK_CHUNK:
                blocks.append(self._chunk(ids, lens))
                ids, lens = array("i"), array("i")
                chunks += 1
        if lens:
            blocks.append(self._chunk(ids, lens))
        del ids, lens
        self._grow_terms()
        blocks = [blk for blk in blocks if len(blk[1])]
        added = sum(len(blk[1]) for blk in blocks)
        if not added:
            return
        self.n_postings += added
        for counts, _, _ in blocks:
            self._df[: len(counts)] += counts
        if self._tail_n + added <= max(_TAIL_MIN, len(self.ids) // _TAIL_DIV):
            for counts, doc_ids, tfs in blocks:  # few: appended to the tail
                k, n = len(doc_ids), self._tail_n
                self._tail_room(k, tfs.dtype)
                self._tail_terms[n : n + k] = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
                self._tail_ids[n : n + k] = doc_ids
                self._tail_tfs[n : n + k] = tfs
                self._tail_n += k
        else:
            self._merge(blocks)
        del blocks
        if chunks:
            release_heap()  # a large build leaves freed chunk buffers on the C heap

    def _chunk(self, ids: array, lens_arr: array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Count one chunk's documents in; its postings (per-term counts, doc ids, tfs) sorted by term.

        ``ids``: the term ids of its documents one after another, ``lens_arr`` their lengths.
        """
        base, k = self.n_docs, len(lens_arr)
        lens = np.frombuffer(lens_arr, dtype=np.int32).astype(np.int64)
        self._grow_docs(k)
        self.doc_len[base : base + k] = lens
        self.total_len += int(lens.sum())
        self.n_docs += k
        self._changed()
        if not len(ids):
            return np.zeros(0, dtype=np.int64), _NO_IDS, _NO_TFS
        tids = np.frombuffer(ids, dtype=np.int32).astype(np.int64)
        docs = np.repeat(np.arange(k, dtype=np.int64), lens)
        keys, tfs = np.unique(tids * k + docs, return_counts=True)  # sorted by term, then doc
        del tids, docs
        terms = keys // k
        doc_ids = (keys - terms * k + base).astype(np.int32)
        counts = np.bincount(terms, minlength=len(self.vocab))
        return counts, doc_ids, tfs.astype(_tf_dtype(int(tfs.max())))

    def compact(self) -> None:
        """Merge the tail into the base (nothing changes for queries)."""
        if self._tail_n == 0 and len(self.ptr) == len(self.vocab) + 1:
            return
        self._merge([])

    def _tail_block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        n = self._tail_n
        if n == 0:
            return None
        terms = self._tail_terms[:n]
        order = np.argsort(terms, kind="stable")  # by term; per term in arrival (= id) order
        block = (np.bincount(terms, minlength=len(self.vocab)), self._tail_ids[:n][order], self._tail_tfs[:n][order])
        self._tail_terms, self._tail_ids, self._tail_tfs, self._tail_n = _NO_IDS, _NO_IDS, _NO_TFS, 0
        return block

    def _merge(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        """A new base: the base, then the tail, then ``blocks`` (each sorted by term; ids rising
        from one to the next), per term in that order."""
        n_terms = len(self.vocab)
        tail = self._tail_block()
        base = (np.diff(self.ptr), self.ids, self.tfs)
        segs = [base, *([tail] if tail is not None else []), *blocks]
        total = np.zeros(n_terms, dtype=np.int64)
        dtype = np.dtype(np.uint8)
        for counts, _, tfs in segs:
            total[: len(counts)] += counts
            dtype = _wider(dtype, tfs.dtype)
        ptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(total, out=ptr[1:])
        del total
        ids = np.empty(int(ptr[-1]), dtype=np.int32)
        tfs = np.empty(int(ptr[-1]), dtype=dtype)
        at = ptr[:-1].copy()  # where each term's next postings go
        for counts, seg_ids, seg_tfs in segs:
            if not len(seg_ids):
                continue
            counts = np.pad(counts, (0, n_terms - len(counts)))
            starts = np.zeros(n_terms + 1, dtype=np.int64)
            np.cumsum(counts, out=starts[1:])
            # entry j of term t goes to at[t] + (j - starts[t]); in pieces of ~4M entries
            step = 1 << 22
            lo_t = 0
            while lo_t < n_terms:
                hi_t = int(np.searchsorted(starts, starts[lo_t] + step, side="right"))
                hi_t = min(max(hi_t - 1, lo_t + 1), n_terms)
                a, z = int(starts[lo_t]), int(starts[hi_t])
                if z > a:
                    dest = np.repeat(at[lo_t:hi_t] - starts[lo_t:hi_t], counts[lo_t:hi_t])
                    dest += np.arange(a, z, dtype=np.int64)
                    ids[dest] = seg_ids[a:z]
                    tfs[dest] = seg_tfs[a:z]
                    del dest
                lo_t = hi_t
            at += counts
        del segs, base, tail
        self.ptr, self.ids, self.tfs = ptr, ids, tfs

    # ------------------------------------------------------------------ scoring
    def _norms(self) -> np.ndarray:
        if self._norm is None:
            n = self.n_docs
            avgdl = self.total_len / n or 1.0
            self._norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[:n] / avgdl)
        return self._norm

    def _terms(self, query_tokens: Sequence[str]) -> list[_Term]:
        """The query's known terms in first-occurrence order, with their postings and
        ``c = qf*idf*(k1+1)``."""
        if self._tail_n and (self.n_postings <= _QUERY_MERGE_MAX
                             or self._tail_n * _QUERY_MERGE_DIV >= len(self.ids)):
            self.compact()  # the same postings in the same order: the scores do not change
        vocab = self.vocab
        found = []
        for term, qf in Counter(query_tokens).items():
            tid = vocab.get(term)
            if tid is not None:
                found.append((term, tid, qf))
        if not found:
            return []
        n, k1p1 = self.n_docs, self.k1 + 1.0
        tids = np.fromiter((t for _, t, _ in found), dtype=np.int64, count=len(found))
        ptr = self.ptr  # a term not in the base: both bounds clip to its end (no postings there)
        starts = ptr.take(tids, mode="clip").tolist()
        ends = ptr.take(tids + 1, mode="clip").tolist()
        dfs = self._df[tids].tolist()
        tail_of: dict[int, np.ndarray] = {}
        if self._tail_n:
            terms = self._tail_terms[: self._tail_n]
            wanted = np.zeros(len(vocab), dtype=bool)  # (np.isin costs more than the query)
            wanted[tids] = True
            sel = np.flatnonzero(wanted[terms])
            if len(sel):
                # grouped by term in one sort (stable: each term's entries stay in arrival = id order),
                # not one pass over the matches per query term: a query of a few hundred terms against
                # a tail of a few hundred documents cost that many passes (the 200-run drift)
                got = terms[sel]
                order = np.argsort(got, kind="stable")
                got, sel = got[order], sel[order]
                tids_in_tail, firsts = np.unique(got, return_index=True)
                bounds = [*firsts.tolist(), len(got)]
                for i, tid in enumerate(tids_in_tail.tolist()):
                    tail_of[tid] = sel[bounds[i]:bounds[i + 1]]
        ids_all, tfs_all = self.ids, self.tfs
        out = []
        for (term, tid, qf), s, e, df in zip(found, starts, ends, dfs, strict=True):
            ids, tfs = ids_all[s:e], tfs_all[s:e]
            extra = tail_of.get(tid)
            if extra is not None:
                ids = np.concatenate((ids, self._tail_ids[extra]))
                tfs = np.concatenate((tfs, self._tail_tfs[extra]))
            out.append(_Term(term, tid, qf, qf * math.log((n + 1) / df) * k1p1, df, ids, tfs, s))
        return out

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Every document's exact score (float64), in the order the reference adds the terms."""
        n = self.n_docs
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        return self._scores_of(self._terms(query_tokens))

    def _scores_of(self, terms: list[_Term]) -> np.ndarray:
        """``scores`` for terms from ``_terms``: every posting of the query in one vectorised pass.

        Each posting's ``c*tf/(norm+tf)`` is the same float64 operation as term by term, and
        ``bincount`` adds a document's contributions in input order (query-term order) starting
        from 0.0, so every sum is bit-identical to adding the terms one after another.
        """
        n = self.n_docs
        if not terms:
            return np.zeros(n, dtype=np.float64)
        norm = self._norms()
        if len(terms) == 1:
            t = terms[0]
            scores = np.zeros(n, dtype=np.float64)
            scores[t.ids] += t.c * t.tfs / (norm[t.ids] + t.tfs)
            return scores
        lens = [t.n for t in terms]
        ids = np.concatenate([t.ids for t in terms])
        tf = np.concatenate([t.tfs for t in terms])
        c = np.repeat(np.array([t.c for t in terms], dtype=np.float64), lens)
        return np.bincount(ids, weights=c * tf / (norm[ids] + tf), minlength=n)

    def _all_cached(self, terms: list[_Term]) -> bool:
        return self._w_version == self._version and (self._w_flat is not None or all(t.tid in self._w for t in terms))

    def _direct(self, terms: list[_Term]) -> bool:
        """Score this small-index query exactly, without weighing (and caching) every term?

        Every add makes all cached weights stale, and weighing the whole index costs far more than
        one query's postings. So after an add, queries are scored directly until the postings they
        have touched add up to the index's own (then caching everything pays for itself).
        """
        if self._all_cached(terms):
            return False  # every weight this query needs is cached
        if self._direct_version != self._version:
            self._direct_version, self._direct_spent = self._version, 0
        if self._direct_spent >= self.n_postings:
            return False
        self._direct_spent += sum(t.n for t in terms)
        return True

    def _weights(self, terms: list[_Term]) -> None:
        """Set each term's float32 ``idf*(k1+1)*tf/(tf+norm)`` (``w``, aligned with its ids, or
        dense over all documents for a term in a quarter of them or more) and their maximum
        (``w_max``), cached until the next add.

        The terms not cached yet are computed together, in one pass (a query's rare terms are
        usually new to the cache, and one numpy pass each would cost more than the query); a
        small index weighs all its terms in that pass.
        """
        version = self._version
        if self._w_version != version:  # stale weights: let them go
            self._w, self._w_flat, self._w_top, self._w_version = {}, None, None, version
        cache = self._w
        if self._w_flat is None:
            cold = [t for t in terms if t.tid not in cache]
            if cold and self.n_postings <= _EAGER_POSTINGS:
                self._weigh_all(terms)
            elif cold:
                ids = np.concatenate([t.ids for t in cold]) if len(cold) > 1 else cold[0].ids
                tfs = np.concatenate([t.tfs for t in cold]) if len(cold) > 1 else cold[0].tfs
                self._weigh([t.tid for t in cold], [t.n for t in cold], ids, tfs)
        if self._w_flat is not None:
            flat, tops = self._w_flat, self._w_top
            for t in terms:
                if t.tid in cache:
                    t.w, t.w_max, t.dense = cache[t.tid]
                else:
                    t.w, t.w_max = flat[t.s : t.s + t.n], float(tops[t.tid])
        else:
            for t in terms:
                t.w, t.w_max, t.dense = cache[t.tid]

    def _weigh_all(self, terms: list[_Term]) -> None:
        """Weigh every posting in one pass (the tail merged first)."""
        if self._tail_n or len(self.ptr) != len(self.vocab) + 1:
            self.compact()
            for t in terms:  # the postings are the same; where they start in the base moved
                t.s = int(self.ptr[t.tid])
        lens = np.diff(self.ptr)
        w = self._weights_of(lens, self.ids, self.tfs)
        starts = self.ptr[:-1]
        self._w_top = np.maximum.reduceat(w, starts) if len(w) else np.zeros(0, dtype=np.float32)
        self._w_flat = w
        total = self.n_docs
        for tid in np.flatnonzero(lens * _DENSE_DIV >= total).tolist():  # common terms: dense
            s, e = int(starts[tid]), int(self.ptr[tid + 1])
            dense = np.zeros(total, dtype=np.float32)
            dense[self.ids[s:e]] = w[s:e]
            self._w[tid] = (dense, float(self._w_top[tid]), True)

    def _weights_of(self, lens, ids: np.ndarray, tfs: np.ndarray) -> np.ndarray:
        """float32 weights of postings: terms one after another, ``lens[i]`` postings of term i."""
        norm = self._norms()
        n1, k1p1 = self.n_docs + 1, self.k1 + 1.0
        idf = np.repeat(np.log(n1 / np.asarray(lens, dtype=np.float64)) * k1p1, lens)
        return (idf * tfs / (norm[ids] + tfs)).astype(np.float32)

    def _weigh(self, tids: list[int], lens: list[int], ids: np.ndarray, tfs: np.ndarray) -> None:
        w = self._weights_of(lens, ids, tfs)
        starts = np.zeros(len(lens), dtype=np.int64)
        np.cumsum(lens[:-1], out=starts[1:])
        tops = np.maximum.reduceat(w, starts).tolist()
        total = self.n_docs
        cache = self._w
        for tid, start, k, top in zip(tids, starts.tolist(), lens, tops, strict=True):
            if k * _DENSE_DIV >= total:  # in a quarter of the documents or more: dense
                dense = np.zeros(total, dtype=np.float32)
                dense[ids[start : start + k]] = w[start : start + k]
                cache[tid] = (dense, top, True)
            else:
                cache[tid] = (w[start : start + k], top, False)

    def top(
        self,
        query_tokens: Sequence[str],
        n: int,
        excluded: np.ndarray | None = None,
        doc_tokens: Callable[[int], Sequence[str]] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(ids, exact scores) of the n best documents, best first, ties by lower id.

        The same documents in the same order as sorting ``scores`` (see the module docstring).
        ``excluded``: a boolean mask of documents that must not be returned. ``doc_tokens(i)``:
        the tokens of document i, when the caller has them (scores the few finalists directly).
        """
        total = self.n_docs
        eligible = total - (int(excluded.sum()) if excluded is not None else 0)
        n = min(n, eligible)
        if n <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        terms = self._terms(query_tokens)
        if terms and not (total < _PRUNE_MIN_DOCS and self._direct(terms)):
            found = self._top_bounded(terms, n, excluded, doc_tokens)
            if found is not None:
                return found
        scores = self._scores_of(terms)
        if excluded is not None:
            scores = np.where(excluded, -np.inf, scores)
        order = top_n(scores, n)
        return order, scores[order]

    def _top_bounded(self, terms: list[_Term], n: int, excluded, doc_tokens):
        """Top n from float32 weights, rarest terms first, exact scores for the finalists only.

        With A(d) the float32 approximation, P(d) its sum over the terms taken so far and R what
        the other terms can still add (each term's largest weight): P <= A <= P + R and
        |S - A| <= m*S for the exact score S. Once the n-th best P (theta) is above R, no
        document outside the taken postings can reach the top n; of those inside, only the ones
        with P + R within the margin of theta can. None: give up (the caller scores everything).
        """
        total = self.n_docs
        self._weights(terms)
        # float32: each weight and each of the T additions is off by at most 2**-24 relative
        margin = (len(terms) + 2) * 2.0**-22
        lo, hi = 1.0 - margin, 1.0 + margin
        if total < _PRUNE_MIN_DOCS:  # small: one pass over every posting beats any bookkeeping
            order, rest_after, goal = list(range(len(terms))), [0.0] * (len(terms) + 1), math.inf
            p_total = 0
        else:
            order = sorted(range(len(terms)), key=lambda i: terms[i].n)  # rarest first
            rest_after = [0.0] * (len(order) + 1)
            for j in range(len(order) - 1, -1, -1):
                rest_after[j] = rest_after[j + 1] + terms[order[j]].qf * terms[order[j]].w_max
            p_total = sum(terms[i].n for i in order)
            goal = p_total // 2  # then half of what is left, and so on
        partial = np.zeros(total, dtype=np.float32)
        spent = j = 0
        while j < len(order):
            batch = []
            while j < len(order) and (spent < goal or not batch):
                batch.append(order[j])
                spent += terms[order[j]].n
                j += 1
            if goal != math.inf:
                goal = spent + (p_total - spent) // 2
            ids, w = [], []
            for i in batch:
                t = terms[i]
                wi = t.w if t.qf == 1 else t.w * np.float32(t.qf)
                if t.dense:
                    partial += wi  # a dense term: one contiguous add
                else:
                    ids.append(t.ids)
                    w.append(wi)
            if ids:
                # float32 sums; np.add.at is fastest with native-width indices
                if len(ids) > 1:
                    ids, w = np.concatenate(ids, dtype=np.intp), np.concatenate(w)
                else:
                    ids, w = ids[0].astype(np.intp), w[0]
                np.add.at(partial, ids, w)
            rest = rest_after[j]
            if rest == 0.0 and excluded is None:  # every term taken: plain top n of the sums
                theta = float(np.partition(partial, total - n)[total - n])
                if theta <= 0:
                    return None
                finalists = np.flatnonzero(partial >= np.float32(theta * lo / hi))
            else:
                # theta: the n-th best P among the documents of the rarest terms taken (any n
                # documents give a valid lower bound; these are the likeliest winners)
                sample, size = [], 0
                for i in order[:j]:
                    sample.append(terms[i].ids)
                    size += terms[i].n
                    if size >= _SAMPLE:
                        break
                docs = np.concatenate(sample) if len(sample) > 1 else sample[0]
                if excluded is not None:
                    docs = docs[~excluded[docs]]
                # a document is in at most len(sample) of these postings, so the best n*len(sample)
                # entries hold at least n distinct documents (if there are n at all)
                m = min(len(docs), n * len(sample))
                if m < n:
                    continue
                vals = partial[docs]
                best = docs[np.argpartition(vals, len(vals) - m)[len(vals) - m :]]
                best = np.unique(best) if len(sample) > 1 else best
                if len(best) < n:
                    continue
                vals = partial[best]
                theta = float(np.partition(vals, len(vals) - n)[len(vals) - n])
                if theta <= 0 or rest * hi >= theta * lo:
                    continue
                finalists = np.flatnonzero(partial >= np.float32(theta * lo / hi - rest))
                if excluded is not None:
                    finalists = finalists[~excluded[finalists]]
            if len(finalists) > n + 2 and 0 < len(order) - j <= _REFINE_TERMS:
                # few terms left: add their weights for the finalists only (their postings are
                # sorted: a binary search each), which leaves about n of them
                approx = partial[finalists].astype(np.float64)
                for i in order[j:]:
                    t = terms[i]
                    if t.dense:
                        approx += t.w[finalists] * t.qf
                        continue
                    pos = np.searchsorted(t.ids, finalists)
                    pos[pos == t.n] = 0
                    hit = t.ids[pos] == finalists
                    approx[hit] += t.w[pos[hit]] * t.qf
                theta = float(np.partition(approx, len(approx) - n)[len(approx) - n])
                finalists = finalists[approx * hi >= theta * lo]
            if len(finalists) > _FINALISTS_MAX and j < len(order):
                continue
            if len(finalists) > _FINALISTS_SEARCH_MAX:
                return None
            exact = self._exact(terms, finalists, doc_tokens)
            best = top_n(exact, n)
            return finalists[best].astype(np.int64), exact[best]
        return None

    def _exact(self, terms: list[_Term], docs: np.ndarray, doc_tokens) -> np.ndarray:
        """Scores of ``docs``, bit-identical to ``scores`` (same terms, order and arithmetic)."""
        norm = self._norms()
        out = np.zeros(len(docs), dtype=np.float64)
        if doc_tokens is not None and len(docs) <= _FINALISTS_MAX:
            where = {t.term: k for k, t in enumerate(terms)}
            for k, d in enumerate(docs.tolist()):
                hits = sorted((where[t], tf) for t, tf in Counter(doc_tokens(d)).items() if t in where)
                nd = norm[d]
                s = np.float64(0.0)
                for q, tf in hits:  # in query-term order, as `scores` adds them
                    s += terms[q].c * tf / (nd + tf)
                out[k] = s
            return out
        for t in terms:
            pos = np.searchsorted(t.ids, docs)
            pos[pos == t.n] = 0
            hit = t.ids[pos] == docs
            if hit.any():
                tf = t.tfs[pos[hit]]
                out[hit] += t.c * tf / (norm[docs[hit]] + tf)
        return out


def release_heap() -> None:
    """Hand memory freed on the C heap back to the system (glibc only; elsewhere a no-op).

    A bulk build frees many mid-sized numpy buffers that the allocator would otherwise keep.
    """
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def top_n(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` best scores: higher first, ties by lower index (deterministic)."""
    total = len(scores)
    if n >= total:
        return np.lexsort((np.arange(total), -scores))
    kth = np.partition(scores, total - n)[total - n]  # the n-th largest value
    above = np.flatnonzero(scores > kth)
    equal = np.flatnonzero(scores == kth)[: n - len(above)]
    cand = np.concatenate((above, equal))
    return cand[np.lexsort((cand, -scores[cand]))]
