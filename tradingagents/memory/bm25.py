"""The BM25 index: an inverted index scored at query time, exact top-n with safe pruning.

Scoring is BM25 with the non-negative IDF ``ln((N+1)/n_t)`` (rank-bm25's ``BM25Plus`` with
``delta=0`` is the reference)::

    score(d) = sum over query terms t of  qf_t * idf_t * (k1+1) * tf_td / (tf_td + k1*(1-b+b*dl_d/avgdl))

Nothing depending on N or avgdl is stored, so adding a document costs only its own terms and the
next query is exact. Postings per term are growable arrays of int32 document ids (ascending) and
uint8 term frequencies (widened if a count ever exceeds 255): 5 bytes a posting.

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

__all__ = ["BM25Index", "Postings", "release_heap", "top_n"]

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


class Postings:
    """Growable arrays of (doc id, term frequency) for one term, ids ascending."""

    __slots__ = ("ids", "tfs", "n", "max_tf", "w", "w_version", "w_max")

    def __init__(self, ids: np.ndarray | None = None, tfs: np.ndarray | None = None, max_tf: int = 0) -> None:
        if ids is None:  # shared empty arrays: the first append or extend allocates what it needs
            self.ids, self.tfs, self.n = _NO_IDS, _NO_TFS, 0
        else:  # views of a loaded index: copied on the first append that needs room
            self.ids, self.tfs, self.n = ids, tfs, len(ids)
        self.max_tf = max_tf
        self.w: np.ndarray | None = None  # the index's float32 weights, valid for w_version
        self.w_version = -1
        self.w_max = 0.0

    def _room(self, extra: int, max_tf: int) -> None:
        dtype = self.tfs.dtype
        while np.iinfo(dtype).max < max_tf:
            dtype = np.dtype(_TF_DTYPES[_TF_DTYPES.index(dtype.type) + 1])
        need = self.n + extra
        if need <= len(self.ids) and dtype == self.tfs.dtype:
            return
        if need > len(self.ids):  # a first bulk extend gets exactly its size; appends double
            cap = need if self.n == 0 and extra > 1 else max(need, 2 * len(self.ids), 2)
        else:
            cap = len(self.ids)
        ids = np.empty(cap, dtype=np.int32)
        ids[: self.n] = self.ids[: self.n]
        tfs = np.empty(cap, dtype=dtype)
        tfs[: self.n] = self.tfs[: self.n]
        self.ids, self.tfs = ids, tfs

    def append(self, doc_id: int, tf: int) -> None:
        if self.n == len(self.ids) or tf > 255:
            self._room(1, tf)
        self.ids[self.n] = doc_id
        self.tfs[self.n] = tf
        self.n += 1
        if tf > self.max_tf:
            self.max_tf = tf

    def extend(self, ids: np.ndarray, tfs: np.ndarray) -> None:
        k = len(ids)
        top = int(tfs.max())
        self._room(k, top)
        self.ids[self.n : self.n + k] = ids
        self.tfs[self.n : self.n + k] = tfs
        self.n += k
        if top > self.max_tf:
            self.max_tf = top

    def trim(self) -> None:
        """Drop spare capacity (after a bulk build)."""
        if len(self.ids) > self.n:
            self.ids = self.ids[: self.n].copy()
            self.tfs = self.tfs[: self.n].copy()


class BM25Index:
    """Inverted index with BM25 (IDF ln((N+1)/n_t), delta 0) computed at query time."""

    def __init__(self, k1: float, b: float) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.vocab: dict[str, int] = {}
        self.postings: list[Postings] = []
        self.doc_len = np.empty(64, dtype=np.int32)
        self.n_docs = 0
        self.total_len = 0
        self.n_postings = 0
        self._norm: np.ndarray | None = None  # k1*(1-b+b*dl/avgdl), valid for n_docs
        self._version = 0  # bumped by every add: cached weights are for one version
        self._cached: list[Postings] = []  # postings holding weights of _cached_version
        self._cached_version = 0
        # postings scored exactly (no weights cached) by small-index queries since the last add
        self._direct_version = -1
        self._direct_spent = 0

    # ------------------------------------------------------------------ building
    def _grow_docs(self, k: int) -> None:
        need = self.n_docs + k
        if need > len(self.doc_len):
            grown = np.empty(max(need, 2 * len(self.doc_len)), dtype=np.int32)
            grown[: self.n_docs] = self.doc_len[: self.n_docs]
            self.doc_len = grown

    def add(self, tokens: Sequence[str]) -> None:
        doc_id = self.n_docs
        self._grow_docs(1)
        self.doc_len[doc_id] = len(tokens)
        self.total_len += len(tokens)
        vocab, postings = self.vocab, self.postings
        counts = Counter(tokens)
        for term, tf in counts.items():
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(postings)
                postings.append(Postings())
            postings[tid].append(doc_id, tf)
        self.n_postings += len(counts)
        self.n_docs += 1
        self._norm = None
        self._version += 1

    def add_many(self, token_lists: Iterable[Sequence[str]]) -> None:
        """Add many documents at once, in chunks, with numpy doing the per-posting work.

        Each document's tokens become term ids (C ints in an ``array``) as soon as it arrives, so
        no chunk of token lists is ever held: a chunk of 20,000 documents' strings is ~45 MB of
        small objects, and the vocabulary's strings and postings created among them pinned most
        of that memory's arenas after it was freed (resident memory stayed high after gc and
        malloc_trim). Now only one document's strings are alive at a time.
        """
        vocab, postings = self.vocab, self.postings
        get = vocab.get
        touched: set[int] = set()
        chunks = 0
        ids, lens = array("i"), array("i")
        for tokens in token_lists:
            tids = list(map(get, tokens))
            if None in tids:  # new terms: ids in first-occurrence order, as add() gives them
                for term in tokens:
                    if term not in vocab:
                        vocab[term] = len(postings)
                        postings.append(Postings())
                tids = list(map(vocab.__getitem__, tokens))
            ids.extend(tids)
            lens.append(len(tids))
            if len(lens) == _BULK_CHUNK:
                touched.update(self._add_chunk(ids, lens))
                ids, lens = array("i"), array("i")
                chunks += 1
        if lens:
            touched.update(self._add_chunk(ids, lens))
        for tid in touched:
            postings[tid].trim()
        if chunks:
            release_heap()  # a large build leaves freed chunk buffers on the C heap

    def _add_chunk(self, ids: array, lens_arr: array) -> list[int]:
        """Index one chunk: ``ids`` the term ids of its documents one after another, ``lens_arr`` their lengths."""
        base, k = self.n_docs, len(lens_arr)
        lens = np.frombuffer(lens_arr, dtype=np.int32).astype(np.int64)
        self._grow_docs(k)
        self.doc_len[base : base + k] = lens
        self.total_len += int(lens.sum())
        self.n_docs += k
        self._norm = None
        self._version += 1
        if not len(ids):
            return []
        postings = self.postings
        tids = np.frombuffer(ids, dtype=np.int32).astype(np.int64)
        docs = np.repeat(np.arange(k, dtype=np.int64), lens)
        keys, tfs = np.unique(tids * k + docs, return_counts=True)  # sorted by term, then doc
        del tids, docs
        self.n_postings += len(keys)
        terms = keys // k
        doc_ids = (keys - terms * k + base).astype(np.int32)
        cuts = np.flatnonzero(np.diff(terms)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [len(keys)]))
        tids_here = terms[starts].tolist()
        for tid, s, e in zip(tids_here, starts.tolist(), ends.tolist(), strict=True):
            postings[tid].extend(doc_ids[s:e], tfs[s:e])
        return tids_here

    # ------------------------------------------------------------------ scoring
    def _norms(self) -> np.ndarray:
        if self._norm is None:
            n = self.n_docs
            avgdl = self.total_len / n or 1.0
            self._norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[:n] / avgdl)
        return self._norm

    def _terms(self, query_tokens: Sequence[str]) -> list[tuple[str, Postings, int, float]]:
        """(term, postings, qf, qf*idf*(k1+1)) of the query's known terms, in first-occurrence order."""
        n, k1p1 = self.n_docs, self.k1 + 1.0
        out = []
        vocab, postings = self.vocab, self.postings
        for term, qf in Counter(query_tokens).items():
            tid = vocab.get(term)
            if tid is not None:
                p = postings[tid]
                out.append((term, p, qf, qf * math.log((n + 1) / p.n) * k1p1))
        return out

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Every document's exact score (float64), in the order the reference adds the terms."""
        n = self.n_docs
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        return self._scores_of(self._terms(query_tokens))

    def _scores_of(self, terms) -> np.ndarray:
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
            p, c = terms[0][1], terms[0][3]
            ids, tf = p.ids[: p.n], p.tfs[: p.n]
            scores = np.zeros(n, dtype=np.float64)
            scores[ids] += c * tf / (norm[ids] + tf)
            return scores
        lens = [p.n for _, p, _, _ in terms]
        ids = np.concatenate([p.ids[: p.n] for _, p, _, _ in terms])
        tf = np.concatenate([p.tfs[: p.n] for _, p, _, _ in terms])
        c = np.repeat(np.array([t[3] for t in terms], dtype=np.float64), lens)
        return np.bincount(ids, weights=c * tf / (norm[ids] + tf), minlength=n)

    def _direct(self, terms) -> bool:
        """Score this small-index query exactly, without weighing (and caching) every term?

        Every add makes all cached weights stale, and weighing the whole index costs far more than
        one query's postings. So after an add, queries are scored directly until the postings they
        have touched add up to the index's own (then caching everything pays for itself).
        """
        if self._cached_version == self._version and all(p.w_version == self._version for _, p, _, _ in terms):
            return False  # every weight this query needs is cached
        if self._direct_version != self._version:
            self._direct_version, self._direct_spent = self._version, 0
        if self._direct_spent >= self.n_postings:
            return False
        self._direct_spent += sum(p.n for _, p, _, _ in terms)
        return True

    def _weights(self, terms) -> list[np.ndarray]:
        """float32 ``idf*(k1+1)*tf/(tf+norm)`` of each term's postings, cached until the next add.

        The terms not cached yet are computed together, in one pass (a query's rare terms are
        usually new to the cache, and one numpy pass each would cost more than the query).
        """
        version = self._version
        if self._cached_version != version:  # stale weights pin their whole block: let them go
            for p in self._cached:
                p.w = None
            self._cached, self._cached_version = [], version
        cold = [p for _, p, _, _ in terms if p.w_version != version]
        if cold and self.n_postings <= _EAGER_POSTINGS:
            cold = [p for p in self.postings if p.w_version != version]  # small: all terms at once
        if cold:
            self._cached.extend(cold)
            norm = self._norms()
            n1, k1p1 = self.n_docs + 1, self.k1 + 1.0
            lens = [p.n for p in cold]
            ids = np.concatenate([p.ids[: p.n] for p in cold]) if len(cold) > 1 else cold[0].ids[: cold[0].n]
            tf = np.concatenate([p.tfs[: p.n] for p in cold]) if len(cold) > 1 else cold[0].tfs[: cold[0].n]
            idf = np.repeat([math.log(n1 / k) * k1p1 for k in lens], lens)
            w = (idf * tf / (norm[ids] + tf)).astype(np.float32)
            starts = np.cumsum([0, *lens[:-1]])
            tops = np.maximum.reduceat(w, starts).tolist()
            total = self.n_docs
            for p, start, top in zip(cold, starts.tolist(), tops, strict=True):
                p.w, p.w_version, p.w_max = w[start : start + p.n], version, top
                if p.n * _DENSE_DIV >= total:  # in a quarter of the documents or more: dense
                    dense = np.zeros(total, dtype=np.float32)
                    dense[p.ids[: p.n]] = p.w
                    p.w = dense
        return [p.w for _, p, _, _ in terms]

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

    def _top_bounded(self, terms, n: int, excluded, doc_tokens):
        """Top n from float32 weights, rarest terms first, exact scores for the finalists only.

        With A(d) the float32 approximation, P(d) its sum over the terms taken so far and R what
        the other terms can still add (each term's largest weight): P <= A <= P + R and
        |S - A| <= m*S for the exact score S. Once the n-th best P (theta) is above R, no
        document outside the taken postings can reach the top n; of those inside, only the ones
        with P + R within the margin of theta can. None: give up (the caller scores everything).
        """
        total = self.n_docs
        ws = self._weights(terms)
        # float32: each weight and each of the T additions is off by at most 2**-24 relative
        margin = (len(terms) + 2) * 2.0**-22
        lo, hi = 1.0 - margin, 1.0 + margin
        if total < _PRUNE_MIN_DOCS:  # small: one pass over every posting beats any bookkeeping
            order, rest_after, goal = list(range(len(terms))), [0.0] * (len(terms) + 1), math.inf
            p_total = 0
        else:
            order = sorted(range(len(terms)), key=lambda i: terms[i][1].n)  # rarest first
            rest_after = [0.0] * (len(order) + 1)
            for j in range(len(order) - 1, -1, -1):
                rest_after[j] = rest_after[j + 1] + terms[order[j]][2] * terms[order[j]][1].w_max
            p_total = sum(terms[i][1].n for i in order)
            goal = p_total // 2  # then half of what is left, and so on
        partial = np.zeros(total, dtype=np.float32)
        spent = j = 0
        while j < len(order):
            batch = []
            while j < len(order) and (spent < goal or not batch):
                batch.append(order[j])
                spent += terms[order[j]][1].n
                j += 1
            if goal != math.inf:
                goal = spent + (p_total - spent) // 2
            ids, w = [], []
            for i in batch:
                wi = ws[i] if terms[i][2] == 1 else ws[i] * np.float32(terms[i][2])
                if len(wi) == total and terms[i][1].n * _DENSE_DIV >= total:
                    partial += wi  # a dense term: one contiguous add
                else:
                    ids.append(terms[i][1].ids[: terms[i][1].n])
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
                    sample.append(terms[i][1].ids[: terms[i][1].n])
                    size += terms[i][1].n
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
                    p = terms[i][1]
                    if len(ws[i]) == total and p.n * _DENSE_DIV >= total:
                        approx += ws[i][finalists] * terms[i][2]
                        continue
                    ids = p.ids[: p.n]
                    pos = np.searchsorted(ids, finalists)
                    pos[pos == p.n] = 0
                    hit = ids[pos] == finalists
                    approx[hit] += ws[i][pos[hit]] * terms[i][2]
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

    def _exact(self, terms, docs: np.ndarray, doc_tokens) -> np.ndarray:
        """Scores of ``docs``, bit-identical to ``scores`` (same terms, order and arithmetic)."""
        norm = self._norms()
        out = np.zeros(len(docs), dtype=np.float64)
        if doc_tokens is not None and len(docs) <= _FINALISTS_MAX:
            where = {term: k for k, (term, _, _, _) in enumerate(terms)}
            for k, d in enumerate(docs.tolist()):
                hits = sorted((where[t], tf) for t, tf in Counter(doc_tokens(d)).items() if t in where)
                nd = norm[d]
                s = np.float64(0.0)
                for q, tf in hits:  # in query-term order, as `scores` adds them
                    s += terms[q][3] * tf / (nd + tf)
                out[k] = s
            return out
        for _, p, _, c in terms:
            ids = p.ids[: p.n]
            pos = np.searchsorted(ids, docs)
            pos[pos == p.n] = 0
            hit = ids[pos] == docs
            if hit.any():
                tf = p.tfs[pos[hit]]
                out[hit] += c * tf / (norm[docs[hit]] + tf)
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
