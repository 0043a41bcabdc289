"""Lexical (BM25) search on Weaviate: the requests and the exact scores of
:meth:`~brain_graph.stores.base.VectorIndex.lexical`.

A lexical query of one profile (its sorted distinct terms) is two requests, sent in the same round
as the others of the search (:meth:`.search.WeaviateSearch.search`):

* a gRPC ``Search`` with ``bm25`` on the ``lexical`` property (the terms joined by spaces; the
  property's ``whitespace`` tokenization sees exactly them), with the search's tenant, project and
  access filter, returning the lexical documents of :func:`candidates` objects. Weaviate's own BM25
  only chooses these candidates (its statistics count every object of the shard, and its scores are
  float32);
* the corpus statistics of the Weaviate tenant's whole shard in that collection, visible or not: one
  GraphQL ``Aggregate`` for all the queries of the search (:func:`stats_document`; an alias per
  statistic, values escaped with ``json.dumps``): ``lexicalLength``'s unfiltered count and sum (the
  property is only stored on objects with a non-empty document, so these are the number of
  documents and their total length, and Weaviate reads them from the property's inverted index, not
  from every object) and, per term, the number of objects whose ``lexical`` holds it (an ``Equal``
  filter on the whitespace-tokenized property).

Every visible candidate is then scored with :func:`brain_graph.core.bm25.score` over those statistics
and the best ``top_k`` kept (:func:`brain_graph.core.bm25.ranked`): the scores are the floats the
embedded store computes. A missing collection or Weaviate tenant has no documents: no hits.

Known limit: the hits are exact only as far as Weaviate's candidates hold the best documents. Weaviate
1.38's BM25 with a limit was seen to leave out, rarely, a document it ranks above ones it returns (a
3,000-document synthetic tenant: about one query in 100 to 300 lost one of its best ``top_k``; the
same query with a larger limit returns it), so such a document is then missing from the hits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from weaviate.proto.v1 import base_search_pb2, search_get_pb2

from brain_graph.core import bm25
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.stores.base import LexicalQuery, VectorHit
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import QUERY_MAX_RESULTS, FoundObject, search_request
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import LEXICAL, LEXICAL_LENGTH

_ALIAS = re.compile(r"q([0-9]+)(?:t[0-9]+)?")
_MISSING_MARKS = ("tenant not found", "could not find class", "class not found")


class StatsUnavailableError(Exception):
    """The statistics document names a collection or property that no longer exists (the schema cache
    is stale): no statistics, no hits."""


def candidates(top_k: int) -> int:
    """The objects Weaviate's BM25 returns per query: ``4 * top_k + 20``, at most :data:`QUERY_MAX_RESULTS`."""
    return min(4 * top_k + 20, QUERY_MAX_RESULTS)


def bm25_request(query: LexicalQuery, tenant: str, where: Any, limit: int, properties: Sequence[str]) -> Any:
    """The ``SearchRequest`` of a query's candidates in its profile's collection and Weaviate tenant,
    filtered by ``where``, returning ``properties`` and the lexical document (no vector)."""
    fields: dict[str, Any] = {
        "collection": collection_name(query.profile_id),
        "tenant": tenant,
        "limit": limit,
        "properties": search_get_pb2.PropertiesRequest(non_ref_properties=[*properties, LEXICAL]),
        "metadata": search_get_pb2.MetadataRequest(),
        "bm25_search": base_search_pb2.BM25(query=" ".join(query.terms), properties=[LEXICAL]),
    }
    if where is not None:
        fields["filters"] = where
    return search_request(**fields)


def _string(value: str) -> str:
    """A GraphQL string literal (JSON's escapes are GraphQL's)."""
    return json.dumps(value, ensure_ascii=False)


def stats_document(queries: Sequence[LexicalQuery], tenant: str) -> str:
    """One GraphQL ``Aggregate`` of the statistics of every query in one Weaviate tenant: alias ``q<i>``
    the count and sum of ``lexicalLength``, ``q<i>t<j>`` the objects holding term ``j`` of query ``i``."""
    parts = []
    for index, query in enumerate(queries):
        collection = collection_name(query.profile_id)
        on_tenant = f"tenant: {_string(tenant)}"
        parts.append(f"q{index}: {collection}({on_tenant}) {{ {LEXICAL_LENGTH} {{ count sum }} }}")
        parts.extend(
            f'q{index}t{position}: {collection}({on_tenant}, where: {{path: ["{LEXICAL}"], operator: Equal, '
            f"valueText: {_string(term)}}}) {{ meta {{ count }} }}"
            for position, term in enumerate(query.terms)
        )
    return "{ Aggregate { " + " ".join(parts) + " } }"


def _first(value: Any) -> Mapping[str, Any]:
    """The one group of an aggregation's result ({} when there is none)."""
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        return value[0]
    return {}


def _number(value: Any) -> int:
    return round(value) if isinstance(value, int | float) else 0


def parse_stats(
    queries: Sequence[LexicalQuery], data: Mapping[str, Any] | None, errors: Sequence[Mapping[str, Any]] | None
) -> list[bm25.CorpusStats | None]:
    """The statistics of each query from the reply to :func:`stats_document` (None: its collection or
    Weaviate tenant does not exist). Raises :class:`StatsUnavailableError` when the document names a
    collection or property the server does not know, and
    :class:`~brain_graph.core.errors.BackendUnavailableError` on any other error."""
    missing: set[int] = set()
    for error in errors or ():
        message = str(error.get("message", ""))
        path = list(error.get("path") or [])
        alias = _ALIAS.fullmatch(str(path[-1])) if len(path) >= 2 else None
        if alias is not None and any(mark in message.lower() for mark in _MISSING_MARKS):
            missing.add(int(alias[1]))
        elif alias is None and "cannot query field" in message.lower():
            raise StatsUnavailableError(message)
        else:
            raise BackendUnavailableError(BACKEND, f"lexical statistics: {message[:300]}")
    data = data or {}
    found: list[bm25.CorpusStats | None] = []
    for index, query in enumerate(queries):
        totals = data.get(f"q{index}")
        if index in missing or totals is None:
            found.append(None)
            continue
        lengths = _first(totals).get(LEXICAL_LENGTH) or {}
        frequencies = {
            term: _number((_first(data.get(f"q{index}t{position}")).get("meta") or {}).get("count"))
            for position, term in enumerate(query.terms)
        }
        found.append(bm25.CorpusStats(_number(lengths.get("count")), _number(lengths.get("sum")), frequencies))
    return found


def ranked_hits(
    query: LexicalQuery, objects: Sequence[FoundObject], stats: bm25.CorpusStats | None, top_k: int
) -> list[VectorHit]:
    """The best ``top_k`` of the (visible) candidates by :func:`brain_graph.core.bm25.score` over
    ``stats`` (none without statistics)."""
    if stats is None:
        return []
    scored = ((obj.node_id, bm25.score(obj.lexical.split(), query.terms, stats)) for obj in objects)
    return [VectorHit(node_id, query.profile_id, value) for node_id, value in bm25.ranked(scored, top_k)]
