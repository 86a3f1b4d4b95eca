"""The stored BM25 index of a memory: ``<name>.jsonl.bm25.npz`` next to the jsonl, a cache only.

Reopening a large memory from its jsonl means parsing and tokenising every line; this file keeps
what that produces (postings, document lengths, the texts, the dates they became knowable) as
numpy arrays. It records how many bytes of the jsonl it covers and their BLAKE2b digest: on open
the digest is checked against the jsonl's first ``covered`` bytes, so an index left from another
file, a cleared or rewritten memory or a damaged file is never used (the memory is then rebuilt
from the jsonl as before); lines appended after it are read from the jsonl as usual. Written to a
temp file in the same folder and renamed into place (``fileio.atomic_file``), so it is whole or absent.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tradingagents.fileio import atomic_file
from tradingagents.memory.bm25 import BM25Index

__all__ = ["FORMAT", "Loaded", "index_file", "load_index", "new_digest", "save_index"]

# 2: flat postings (ptr, ids, tfs) without the per-term max_tf of 1; a file of another format is
# never read (the memory is rebuilt from its jsonl and stored again in this one)
FORMAT = 2
_EPOCH = _dt.date(1970, 1, 1).toordinal()


def new_digest():
    return hashlib.blake2b(digest_size=20)


def index_file(jsonl: Path) -> Path:
    return Path(str(jsonl) + ".bm25.npz")


@dataclass
class Loaded:
    index: BM25Index
    situations: list[str]
    recommendations: list[str]
    known_from: list[str | None]
    covered: int
    lines: int
    problems: list[str]
    digest: object  # the running hash of the covered bytes, to continue from


def _days(known: list[str | None]) -> np.ndarray:
    return np.array(
        [-1 if k is None else _dt.date.fromisoformat(k).toordinal() - _EPOCH for k in known], dtype=np.int32
    )


def save_index(
    jsonl: Path,
    index: BM25Index,
    situations: list[str],
    recommendations: list[str],
    known_from: list[str | None],
    *,
    covered: int,
    lines: int,
    digest_hex: str,
    problems: list[str],
) -> None:
    """Write the index for the first ``covered`` bytes (``lines`` lines) of ``jsonl``."""
    terms = list(index.vocab)  # ids are insertion order
    index.compact()  # the tail merged into the base: one CSR block covers every term
    ptr, ids, tfs = index.ptr, index.ids, index.tfs
    texts = [*situations, *recommendations]
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)))
    meta = {
        "format": FORMAT, "covered": covered, "lines": lines, "digest": digest_hex, "docs": index.n_docs,
        "k1": index.k1, "b": index.b, "problems": problems,
    }
    arrays = {
        "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        "vocab": np.frombuffer("\n".join(terms).encode(), dtype=np.uint8),
        "ptr": ptr,
        "ids": ids,
        "tfs": tfs,
        "doc_len": index.doc_len[: index.n_docs],
        "known": _days(known_from),
        "texts": np.frombuffer("".join(texts).encode(), dtype=np.uint8),
        "text_ends": ends,
    }
    with atomic_file(index_file(jsonl), durable=False) as fh:  # a cache: rebuilt from the jsonl if lost
        np.savez(fh, **arrays)


def load_index(jsonl: Path, k1: float, b: float) -> Loaded | None:
    """The stored index if it matches the jsonl's first bytes and is whole; None otherwise."""
    try:
        with np.load(index_file(jsonl), allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes())
            if meta.get("format") != FORMAT:  # k1 and b are applied at query time: any will do
                return None
            covered, n = int(meta["covered"]), int(meta["docs"])
            with open(jsonl, "rb") as fh:
                digest = new_digest()
                left = covered
                while left > 0:
                    chunk = fh.read(min(left, 1 << 22))
                    if not chunk:
                        return None  # the jsonl is shorter than what the index covers
                    digest.update(chunk)
                    left -= len(chunk)
            if digest.hexdigest() != meta["digest"]:
                return None
            vocab_blob = z["vocab"].tobytes().decode()
            ptr, ids, tfs = z["ptr"], z["ids"], z["tfs"]
            doc_len, known, blob, ends = z["doc_len"], z["known"], z["texts"], z["text_ends"]
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError):
        return None
    terms = vocab_blob.split("\n") if vocab_blob else []
    n_terms = len(terms)
    # the arrays must describe n documents consistently (a cache is never trusted blindly)
    if not (
        len(ptr) == n_terms + 1 and ptr[0] == 0 and ptr[-1] == len(ids) == len(tfs)
        and len(doc_len) == len(known) == n and len(ends) == 2 * n and bool(np.all(np.diff(ptr) > 0))
        and (len(ids) == 0 or (int(ids.min()) >= 0 and int(ids.max()) < n)) and len(set(terms)) == n_terms
    ):
        return None
    if ids.dtype != np.int32 or tfs.dtype not in (np.uint8, np.uint16, np.uint32) or doc_len.dtype != np.int32:
        return None
    index = BM25Index.from_arrays(k1, b, terms, ptr, ids, tfs, doc_len)
    try:
        text = blob.tobytes().decode()
    except UnicodeDecodeError:
        return None
    cuts = [0, *ends.tolist()]
    if cuts[-1] != len(text):
        return None
    texts = [text[cuts[i] : cuts[i + 1]] for i in range(2 * n)]
    known_from = [
        None if d < 0 else _dt.date.fromordinal(d + _EPOCH).isoformat() for d in known.tolist()
    ]
    return Loaded(
        index=index, situations=texts[:n], recommendations=texts[n:], known_from=known_from,
        covered=covered, lines=int(meta["lines"]), problems=list(meta.get("problems", [])), digest=digest,
    )
