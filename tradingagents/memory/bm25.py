"""The BM25 index: an inverted index scored at query time, and an exact top-n selection.

Scoring is BM25 with the non-negative IDF ``ln((N+1)/n_t)`` (rank-bm25's ``BM25Plus`` with
``delta=0`` is the reference). Only the postings of the query terms are scored, so adding a
document costs only its own terms and ``avgdl`` is always current.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

__all__ = ["BM25Index", "top_n"]


class _Postings:
    """Growable arrays of (doc id, term frequency) for one term."""

    __slots__ = ("ids", "tfs", "n")

    def __init__(self) -> None:
        self.ids = np.empty(4, dtype=np.int64)
        self.tfs = np.empty(4, dtype=np.float64)
        self.n = 0

    def append(self, doc_id: int, tf: int) -> None:
        if self.n == len(self.ids):
            cap = 2 * len(self.ids)
            ids = np.empty(cap, dtype=np.int64)
            ids[: self.n] = self.ids
            tfs = np.empty(cap, dtype=np.float64)
            tfs[: self.n] = self.tfs
            self.ids, self.tfs = ids, tfs
        self.ids[self.n] = doc_id
        self.tfs[self.n] = tf
        self.n += 1


class BM25Index:
    """Inverted index with BM25 (IDF ln((N+1)/n_t), delta 0) computed at query time."""

    def __init__(self, k1: float, b: float) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.postings: dict[str, _Postings] = {}
        self.doc_len = np.empty(64, dtype=np.float64)
        self.n_docs = 0
        self.total_len = 0
        self._norm: np.ndarray | None = None  # k1*(1-b+b*dl/avgdl), valid for n_docs

    def add(self, tokens: list[str]) -> None:
        doc_id = self.n_docs
        if doc_id == len(self.doc_len):
            grown = np.empty(2 * len(self.doc_len), dtype=np.float64)
            grown[:doc_id] = self.doc_len[:doc_id]
            self.doc_len = grown
        self.doc_len[doc_id] = len(tokens)
        self.total_len += len(tokens)
        postings = self.postings
        for term, tf in Counter(tokens).items():
            p = postings.get(term)
            if p is None:
                p = postings[term] = _Postings()
            p.append(doc_id, tf)
        self.n_docs += 1
        self._norm = None

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        n = self.n_docs
        scores = np.zeros(n, dtype=np.float64)
        if n == 0:
            return scores
        terms = [(t, qf) for t, qf in Counter(query_tokens).items() if t in self.postings]
        if not terms:
            return scores
        if self._norm is None:
            avgdl = self.total_len / n or 1.0
            self._norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[:n] / avgdl)
        norm = self._norm
        k1p1 = self.k1 + 1.0
        for term, qf in terms:
            p = self.postings[term]
            ids = p.ids[: p.n]
            tf = p.tfs[: p.n]
            idf = math.log((n + 1) / p.n)
            scores[ids] += (qf * idf * k1p1) * tf / (norm[ids] + tf)
        return scores


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

