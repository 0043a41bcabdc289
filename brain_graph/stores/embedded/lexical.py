"""Lexical search of the embedded store: an in-memory BM25 index of one profile of one tenant.

The lexical documents stored with a tenant's vectors of one profile (``vectors.lexical``, written by
the indexer: :func:`brain_graph.core.bm25.lexical_document`) are read once per data version, like the
vector matrices (:mod:`.vectors`, whose cache holds these indexes too), and kept as postings: per
term, the rows holding it and how often. A query scores every row holding one of its terms with
:func:`brain_graph.core.bm25.term_score`, term by term in sorted order (the float operations of
:func:`brain_graph.core.bm25.score`, so the scores equal every other backend's), over the statistics
of all the rows (documents of any project and visibility), then keeps the visible rows that pass
the seed filter (:mod:`.facets`), before the best are taken.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from brain_graph.core.bm25 import K1, B, idf, ranked
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import access_columns, numpy_visible
from brain_graph.stores.embedded.facets import FacetColumns
from brain_graph.stores.embedded.schema import vector_facet_columns

_LEXICAL_OF = (
    "SELECT node_id, project_key, secured, acl, {facets}, lexical FROM vectors"
    " WHERE tenant_id = :tenant AND profile_id = :profile AND lexical != ''"
)
LEXICAL_OF = _LEXICAL_OF.format(facets=vector_facet_columns(True))
OLDER_LEXICAL_OF = _LEXICAL_OF.format(facets=vector_facet_columns(False))  # a store of schema version 4
ROW_OVERHEAD = 120  # bytes per row besides its postings: node id string, list slots, columns
POSTING_BYTES = 16  # one row index and one frequency

Rows = Callable[[str, Mapping[str, Any]], list[sqlite3.Row]]


@dataclass(frozen=True)
class LexicalIndex:
    """The lexical documents of one profile of one tenant, as postings: the rows holding term
    ``terms[t]`` (sorted) and their frequencies are ``posting_rows[offsets[t]:offsets[t + 1]]`` and the
    same slice of ``posting_counts``."""

    tenant_id: str
    node_ids: Sequence[str]
    lengths: npt.NDArray[np.float64]  # terms per document
    terms: Sequence[str]  # sorted
    offsets: npt.NDArray[np.int64]  # len(terms) + 1 bounds into the posting arrays
    posting_rows: npt.NDArray[np.intp]
    posting_counts: npt.NDArray[np.float64]
    total_length: int
    secured: npt.NDArray[np.bool_]
    acl_index: dict[str, npt.NDArray[np.intp]]
    facets: FacetColumns  # each row's project and facets

    @property
    def nbytes(self) -> int:
        return (
            POSTING_BYTES * len(self.posting_rows)
            + ROW_OVERHEAD * len(self.node_ids)
            + 64 * len(self.terms)
            + self.facets.nbytes
        )

    @classmethod
    def from_rows(cls, tenant_id: str, rows: Sequence[sqlite3.Row]) -> LexicalIndex:
        """Build from ``node_id, project_key, secured, acl``, facet-column
        (:data:`~brain_graph.stores.embedded.schema.VECTOR_FACET_COLUMNS`) and ``lexical`` rows (any order)."""
        ordered = sorted(rows, key=lambda row: row["node_id"])
        lists: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(len(ordered), dtype=np.float64)
        total = 0
        for index, row in enumerate(ordered):
            document = row["lexical"].split()
            lengths[index] = len(document)
            total += len(document)
            for term, frequency in Counter(document).items():
                held = lists.setdefault(term, ([], []))
                held[0].append(index)
                held[1].append(frequency)
        terms = sorted(lists)
        offsets = np.zeros(len(terms) + 1, dtype=np.int64)
        np.cumsum([len(lists[term][0]) for term in terms], out=offsets[1:])
        secured, acl_index = access_columns(ordered)
        return cls(
            tenant_id=tenant_id,
            node_ids=[row["node_id"] for row in ordered],
            lengths=lengths,
            terms=terms,
            offsets=offsets,
            posting_rows=np.fromiter((row for term in terms for row in lists[term][0]), dtype=np.intp),
            posting_counts=np.fromiter((count for term in terms for count in lists[term][1]), dtype=np.float64),
            total_length=total,
            secured=secured,
            acl_index=acl_index,
            facets=FacetColumns.from_rows(ordered),
        )

    def postings(self, term: str) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]] | None:
        """The rows holding ``term`` (ascending) and its frequency in each; None for an unknown term."""
        index = bisect_left(self.terms, term)
        if index == len(self.terms) or self.terms[index] != term:
            return None
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.posting_rows[start:end], self.posting_counts[start:end]

    def search(
        self, terms: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[tuple[str, float]]:
        """The best ``top_k`` visible rows that pass ``seed_filter`` with a positive score for the
        sorted distinct ``terms``, as (node id, score), by score descending then node id."""
        documents = len(self.node_ids)
        if top_k <= 0 or not documents:
            return []
        average = self.total_length / documents
        scores = np.zeros(documents, dtype=np.float64)
        for term in terms:
            found = self.postings(term)
            if found is None:
                continue
            rows, frequencies = found
            weight = idf(documents, len(rows))
            norm = K1 * (1.0 - B + B * self.lengths[rows] / average) if average > 0 else K1
            scores[rows] += weight * frequencies * (K1 + 1.0) / (frequencies + norm)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) == 0:
            return []
        visible = numpy_visible(scope, self.tenant_id, self.secured, self.acl_index)
        admitted = self.facets.admitted(seed_filter)
        if admitted is not None:
            visible &= admitted
        candidates = candidates[visible[candidates]]
        if len(candidates) > top_k:  # keep the top_k best scores and every row tied with the last of them
            kth = np.partition(scores[candidates], len(candidates) - top_k)[len(candidates) - top_k]
            candidates = candidates[scores[candidates] >= kth]
        return ranked(((self.node_ids[row], float(scores[row])) for row in candidates.tolist()), top_k)


def load_lexical(rows: Rows, tenant_id: str, profile_id: str, *, stored: bool = True) -> LexicalIndex:
    """Read one profile's lexical documents of one tenant with the counted statement runner ``rows``
    (``stored``: the store's vectors have facet columns,
    :func:`~brain_graph.stores.embedded.schema.stores_vector_facets`)."""
    sql = LEXICAL_OF if stored else OLDER_LEXICAL_OF
    return LexicalIndex.from_rows(tenant_id, rows(sql, {"tenant": tenant_id, "profile": profile_id}))
