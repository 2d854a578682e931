"""The search engine over one corpus: bm25s (BM25, in process) holding every document with its
scope and store, and a ranking that filters by the scopes a query may see and the stores it
reaches (docs/benchmark.md §9, §9.1). The
ranking is deterministic: documents are indexed in doc-id order and ranked by score with ties
broken by doc id, so the same corpus and query give the same order in any process. bm25s (and
the scipy it loads) is imported when a first index is built or a first text tokenized, so a
command that searches nothing starts without it."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import Stemmer

from ..tasks import reached

_TOKEN = re.compile(r"\w\w+")
_stem = functools.lru_cache(maxsize=1 << 16)(Stemmer.Stemmer("english").stemWord)


@functools.cache
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def tokens(text: str) -> list[str]:
    """The terms of `text` as the index takes them: lower-case runs of two or more letters or
    digits (a record reference such as QT48213 stays one term), English stop words dropped,
    each stemmed (Snowball, so `annexes` finds `annex`)."""
    stop = _stop_words()
    return [_stem(word) for word in _TOKEN.findall(text.lower()) if word not in stop]


@dataclass(frozen=True)
class IndexedDocument:
    """A document as the index holds it: what may be shown of it, the scope it is kept in, and
    the store (connector) holding it (None: a corpus without stores)."""

    doc_id: str
    title: str
    body: str
    scope: str
    store: str | None = None


@dataclass(frozen=True)
class Ranking:
    """One query's result before disclosure: the positions (in `CorpusIndex.documents`) of the
    best `k` documents the query may see, and of the documents it may not see among the best
    `k` of the stores it reaches (what the scope filter took off this page)."""

    visible: tuple[int, ...]
    withheld: tuple[int, ...]


class CorpusIndex:
    """A BM25 index of a corpus, built once and queried by any number of sessions."""

    def __init__(self, documents: Sequence[IndexedDocument]) -> None:
        self.documents = tuple(sorted(documents, key=lambda d: d.doc_id))
        self.positions = {d.doc_id: i for i, d in enumerate(self.documents)}
        import bm25s

        self._engine = bm25s.BM25()
        self._engine.index(
            [tokens(f"{d.title} {d.body}") for d in self.documents], show_progress=False
        )
        self._vocabulary: dict[str, int] = self._engine.vocab_dict

    def allowed(self, scopes: Collection[str]) -> np.ndarray:
        """Which documents a user holding `scopes` may see, as a boolean mask."""
        return np.array([d.scope in scopes for d in self.documents], dtype=bool)

    def reach(self, stores: Collection[str]) -> np.ndarray:
        """Which documents a connector reaching `stores` holds (all when `stores` is empty), as a
        boolean mask."""
        return np.array([reached(d.store, stores) for d in self.documents], dtype=bool)

    def rank(
        self, query: str, allowed: np.ndarray, k: int, reach: np.ndarray | None = None
    ) -> Ranking:
        """The documents matching `query` (sharing a term with it) among those in `reach`
        (None: all), best first, ties by doc id: the first `k` of those `allowed` (and in
        reach), and the disallowed among the first `k` of all in reach."""
        ids = [self._vocabulary[t] for t in dict.fromkeys(tokens(query)) if t in self._vocabulary]
        if not ids:
            return Ranking((), ())
        scores = self._engine.get_scores_from_ids(ids)
        order = np.argsort(-scores, kind="stable")
        order = order[scores[order] > 0]
        if reach is not None:
            order = order[reach[order]]
        visible = order[allowed[order]][:k]
        top = order[:k]
        return Ranking(tuple(visible.tolist()), tuple(top[~allowed[top]].tolist()))
