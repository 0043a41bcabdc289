"""Checks of everything a load writes, run before the first write on every backend.

Whatever a backend could refuse half way (a string that is not valid Unicode, a non-finite number, an
integer outside the signed 64-bit range, a vector of the wrong dimension, an untyped ACL entry, an edge
type outside the identifier grammar) is refused here first, as one
:class:`~brain_graph.core.errors.DatasetError` line naming the record and field, so a rejected load writes
nothing. So is what would load but mislead: an id, tenant id or project key that prints like another
(white space at either end, invisible format characters; node ids hold no white space but single
spaces), a url that is not an absolute ``http(s)`` URL (``javascript:``, ``data:``, a relative path:
every url of a hit, passage or citation is a link a UI may render), and an ``acl`` on a node whose
``secured`` is false (it would be public to everyone).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from brain_graph.core.contracts import MAX_PROJECT_CHARS, MAX_TENANT_CHARS, identifier_problem
from brain_graph.core.errors import ConfigurationError, DatasetError
from brain_graph.core.filters import NodeFacets, parse_timestamp
from brain_graph.core.security import parse_acl_entry, text_problem
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.stores.base import ChangeSet, EdgeRecord, NodeRecord, ProfileIndexInfo, VectorRecord, VectorValues

MAX_NODE_ID_CHARS = 512
MAX_NODE_TYPE_CHARS = 128
MAX_JSON_DEPTH = 32
MAX_FLOAT32 = 3.4028234663852886e38  # vectors are stored as float32 on every backend
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1  # JSON integers every backend and JSON encoder (orjson) can hold
MAX_URL_CHARS = 2_048
MAX_TAGS = 64
MAX_LABEL_CHARS = 128  # a tag or namespace
MIN_TIMESTAMP = parse_timestamp("0001-01-01T00:00:00Z")
MAX_TIMESTAMP = parse_timestamp("9999-12-31T23:59:59.999999Z")
URL_SCHEMES = frozenset({"http", "https"})
# An absolute http(s) URL whose host is ASCII letters, digits, dots and hyphens, without user info or
# port: urlsplit reads it as scheme http(s), that host (non-empty) and no port, so it needs no split.
_SIMPLE_URL = re.compile(r"(?i:https?)://[A-Za-z0-9.\-]+(?:[/?#].*)?", re.DOTALL)


def _string_problem(value: str) -> str | None:
    """Why a value is not a string a backend can store: not a ``str`` at all (``bytes`` would be stored
    as a BLOB), or one holding a lone surrogate (not encodable as UTF-8)."""
    if not isinstance(value, str):
        return f"must be a string (got {type(value).__name__})"
    if value.isascii():  # O(1) in CPython: most strings are decided without encoding them
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"is not valid Unicode (lone surrogate U+{ord(value[error.start]):04X} at {error.start})"
    return None


def _json_problem(value: Any, depth: int = 0) -> str | None:
    """Why a property value is not plain, finite, storable JSON."""
    if depth > MAX_JSON_DEPTH:
        return f"is nested deeper than {MAX_JSON_DEPTH} levels"
    if isinstance(value, str):  # the common case first
        return _string_problem(value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if MIN_INT64 <= value <= MAX_INT64 else "holds an integer outside the signed 64-bit range"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"holds a non-finite number ({value})"
    if isinstance(value, list | tuple):
        return next((p for item in value if (p := _json_problem(item, depth + 1)) is not None), None)
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"has a non-string key {key!r}"
            problem = _string_problem(key) or _json_problem(item, depth + 1)
            if problem is not None:
                return problem
        return None
    return f"holds a {type(value).__name__}, which is not JSON"


def _plain(value: str) -> bool:
    """Whether ``value`` holds no character of the Unicode categories "Other" (control, format,
    surrogate: so no lone surrogate either) or "Separator" but the ASCII space (``str.isprintable``,
    one pass in C): then it passes :func:`~brain_graph.core.security.text_problem` and
    :func:`_string_problem`, and its only white space is U+0020 (every other white space character
    is of those categories)."""
    return value.isprintable()


def _identifier(value: str, max_chars: int) -> str | None:
    if not isinstance(value, str):
        return _string_problem(value)
    if _plain(value) and 0 < len(value) <= max_chars and value[0] != " " and value[-1] != " ":
        return None  # the common case, in C: no other check can fail
    return _string_problem(value) or identifier_problem(value, max_chars)


def _node_id(value: str) -> str | None:
    """An identifier whose only white space is single U+0020 spaces: ids are printed one-lined (as
    code spans), where ``w1 `` would print like ``w1``, and ``w  1`` or ``w 1`` with a no-break space
    like ``w 1``."""
    problem = _identifier(value, MAX_NODE_ID_CHARS)
    if problem is not None:
        return problem
    other = None if _plain(value) else next((char for char in value if char.isspace() and char != " "), None)
    if other is not None:
        return f"must not contain white space other than single spaces (found U+{ord(other):04X})"
    return "must not contain runs of spaces" if "  " in value else None


def _url_problem(url: str) -> str | None:
    """Why ``url`` is not an absolute ``http(s)`` URL with a host, without white space or control
    characters, of at most :data:`MAX_URL_CHARS` characters."""
    if isinstance(url, str) and _plain(url) and " " not in url and len(url) <= MAX_URL_CHARS:  # the common case
        return None if _SIMPLE_URL.fullmatch(url) else _url_parts_problem(url)
    problem = _string_problem(url)
    if problem is not None:
        return problem
    if len(url) > MAX_URL_CHARS:
        return f"must be at most {MAX_URL_CHARS} characters (got {len(url)})"
    blank = next((char for char in url if char.isspace()), None)
    if blank is not None:
        return f"must not contain white space (found U+{ord(blank):04X})"
    problem = text_problem(url)
    if problem is not None:
        return problem
    return _url_parts_problem(url)


def _url_parts_problem(url: str) -> str | None:
    """Why ``url`` does not split into an ``http(s)`` scheme, a host and a valid port, if it does not."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number in 0..65535 raises
    except ValueError as error:
        return f"is not a valid URL ({error})"
    if parts.scheme.lower() not in URL_SCHEMES or not parts.hostname:
        return "must be an absolute http(s) URL (http://host/... or https://host/...)"
    return None


def _cut(value: object, chars: int = 80) -> object:
    """The start of an id or type for an error message (any other value as it is: a record that is not
    of the types its fields name is described, not failed on)."""
    return value[:chars] if isinstance(value, str | bytes) else value


def _first_problem(checks: Sequence[tuple[str, str | None]]) -> str | None:
    """``<field> <problem>`` of the first failed check."""
    return next((f"{field} {problem}" for field, problem in checks if problem is not None), None)


def _entry_problem(entry: object) -> str | None:
    """Why an ACL entry is refused, if it is."""
    try:
        parse_acl_entry(entry)
    except ValueError as error:
        return f"acl: {error}"
    return None


# The same groups stand in the ACLs of many nodes: each distinct entry is parsed once (the numbers:
# docs/internals/loading.md).
_cached_entry_problem = lru_cache(maxsize=65_536)(_entry_problem)


def _acl_problem(acl: Sequence[str], secured: bool) -> str | None:
    for entry in acl:
        problem = _cached_entry_problem(entry) if isinstance(entry, str) else _entry_problem(entry)
        if problem is not None:
            return problem
    if acl and not secured:
        return "acl given but secured is false (the node would be public): set secured to true or remove the acl"
    return None


def _node_problem(node: NodeRecord) -> str | None:
    checks: list[tuple[str, str | None]] = [
        ("tenantId", _identifier(node.tenant_id, MAX_TENANT_CHARS)),
        ("id", _node_id(node.node_id)),
        ("nodeType", _identifier(node.node_type, MAX_NODE_TYPE_CHARS)),
        ("projectKey", None if node.project_key is None else _identifier(node.project_key, MAX_PROJECT_CHARS)),
        ("title", None if node.title is None else _string_problem(node.title)),
        ("url", None if node.url is None else _url_problem(node.url)),
        ("text", _json_problem(dict(node.text))),
        ("properties", _json_problem(dict(node.properties))),
        ("secured", _flag_problem(node.secured)),
        ("namespace", None if node.namespace is None else _label_problem(node.namespace)),
        ("tags", _tags_problem(node.tags)),
        ("updatedAt", None if node.updated_at is None else _timestamp_problem(node.updated_at)),
    ]
    return _first_problem(checks) or _acl_problem(node.acl, node.secured)


def _label_problem(value: object) -> str | None:
    """Why a tag or namespace is refused: what an identifier refuses (blank, too long, white space at
    either end, control or format characters)."""
    if not isinstance(value, str):
        return f"must be a string (got {type(value).__name__})"
    return _identifier(value, MAX_LABEL_CHARS)


def _tags_problem(tags: Sequence[str]) -> str | None:
    if len(tags) > MAX_TAGS:
        return f"must hold at most {MAX_TAGS} tags (got {len(tags)})"
    return next((f"entry {_cut(tag)!r} {problem}" for tag in tags if (problem := _label_problem(tag))), None)


def _timestamp_problem(value: object) -> str | None:
    """Why an update time is refused: not an integer of microseconds within years 1 to 9999."""
    if type(value) is not int or not MIN_TIMESTAMP <= value <= MAX_TIMESTAMP:
        return "must be a time in years 1 to 9999 (microseconds since the Unix epoch)"
    return None


def _facets_problem(facets: NodeFacets) -> str | None:
    """Why a vector's facets are refused: a node type, namespace or tag a node could not have, or an
    update time out of range."""
    problem = None if facets.node_type == "" else _identifier(facets.node_type, MAX_NODE_TYPE_CHARS)
    if problem is None and facets.namespace is not None:
        problem = _label_problem(facets.namespace)
    problem = problem or _tags_problem(facets.tags)
    if problem is None and facets.updated_at is not None:
        problem = _timestamp_problem(facets.updated_at)
    return problem


def _flag_problem(value: object) -> str | None:
    """Why ``secured`` is not a bool (a string such as "no" would be stored as a truthy value)."""
    return None if isinstance(value, bool) else f"must be true or false (got {type(value).__name__})"


@lru_cache(maxsize=1024)
def _edge_type_problem(edge_type: str) -> str | None:
    """Why an edge type is refused (cached: a load has a handful of types, each on many edges)."""
    try:
        check_edge_type(edge_type)
    except ConfigurationError as error:
        return f"edgeType: {error}"
    return None


def _edge_problem(edge: EdgeRecord) -> str | None:
    if not isinstance(edge.edge_type, str):
        return f"edgeType {_string_problem(edge.edge_type)}"
    problem = _edge_type_problem(edge.edge_type)
    if problem is not None:
        return problem
    for field, value in (("fromNodeId", edge.from_node_id), ("toNodeId", edge.to_node_id)):
        problem = _node_id(value)
        if problem is not None:
            return f"{field} {problem}"
    problem = _json_problem(dict(edge.properties))
    return None if problem is None else f"properties {problem}"


def _vector_problem(vector: VectorRecord, dimensions: Mapping[str, int]) -> str | None:
    expected = dimensions.get(vector.profile_id)
    if expected is None:
        return f"profile {vector.profile_id!r} comes without profile metadata"
    checks = (
        ("tenantId", _identifier(vector.tenant_id, MAX_TENANT_CHARS)),
        ("nodeId", _node_id(vector.node_id)),
        ("projectKey", None if vector.project_key is None else _identifier(vector.project_key, MAX_PROJECT_CHARS)),
        ("secured", _flag_problem(vector.secured)),
        ("facets", _facets_problem(vector.facets)),
    )
    problem = _first_problem(checks) or _acl_problem(vector.acl, vector.secured)
    if problem is not None:
        return problem
    if len(vector.vector) != expected:
        return f"has dimension {len(vector.vector)}, profile {vector.profile_id} has {expected}"
    if not _finite_float32(vector.vector):
        return "holds a value that is not a finite float32"
    return None


def _finite_float32(vector: VectorValues) -> bool:
    """Whether every value is a finite float32 (a float32 numpy row: finite is enough)."""
    if isinstance(vector, np.ndarray) and vector.dtype == np.float32:
        return bool(np.isfinite(vector).all())
    values = _float_values(vector)
    return bool(np.isfinite(values).all() and (np.abs(values) <= MAX_FLOAT32).all())


def _float_values(vector: VectorValues) -> npt.NDArray[np.float64]:
    """The values of a vector as float64 (a numpy row as it is; any other sequence iterated once)."""
    if isinstance(vector, np.ndarray):
        return vector.astype(np.float64, copy=False)
    return np.fromiter(vector, dtype=np.float64, count=len(vector))


def _profiles_problem(profiles: Sequence[ProfileIndexInfo]) -> str | None:
    seen: set[str] = set()
    for profile in profiles:
        if profile.profile_id in seen:
            return f"profile {profile.profile_id!r} is given twice"
        seen.add(profile.profile_id)
        dimension = profile.dimension
        if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
            return f"profile {profile.profile_id!r} has dimension {dimension!r}; it must be a positive integer"
        problem = _string_problem(profile.embedder_name) or (None if profile.embedder_name else "is empty")
        if problem is not None:
            return f"profile {profile.profile_id!r}: embedder name {problem}"
    return None


def _where_node(node: NodeRecord) -> str:
    return f"node {_cut(node.node_id)!r} of tenant {_cut(node.tenant_id)!r}"


class CheckedNodes(tuple[NodeRecord, ...]):
    """Nodes :func:`check_load` passed, as an immutable sequence: a backend's load does not check them
    again. Only :func:`checked_records` makes one (or, for records that are not a tuple, a reader
    that checked each record sets their ``checked`` attribute: :func:`passed`)."""

    __slots__ = ()


class CheckedEdges(tuple[EdgeRecord, ...]):
    """Edges :func:`check_load` passed (see :class:`CheckedNodes`)."""

    __slots__ = ()


def passed(records: Iterable[object]) -> bool:
    """Whether ``records`` passed the checks of :func:`check_load` already: a :class:`CheckedNodes`,
    a :class:`CheckedEdges`, or a collection whose ``checked`` attribute is ``True`` (records on disk,
    vectors checked as they are made: :func:`check_vector`)."""
    return isinstance(records, CheckedNodes | CheckedEdges) or getattr(records, "checked", False) is True


def record_tenants(records: Iterable[NodeRecord | EdgeRecord | VectorRecord]) -> set[str]:
    """The tenants of ``records``: their declared ``tenants`` when they have them (records on disk,
    vectors made as they are written, which iterating would make), else each record's."""
    declared = getattr(records, "tenants", None)
    if declared is not None:
        return set(declared)
    return {record.tenant_id for record in records}


def check_vector(vector: VectorRecord, dimensions: Mapping[str, int]) -> None:
    """Raise :class:`DatasetError` for a vector :func:`check_load` refuses (``dimensions`` by profile)."""
    problem = _vector_problem(vector, dimensions)
    if problem is not None:
        raise DatasetError(f"vector of node {_cut(vector.node_id)!r} ({vector.profile_id}): {problem}")


def checked_records(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> tuple[CheckedNodes, CheckedEdges]:
    """``nodes`` and ``edges`` after :func:`check_load` passed on them, marked so that a later load
    skips their checks (:class:`DatasetError` as :func:`check_load` raises it)."""
    check_load(nodes, edges, [], [])
    return CheckedNodes(nodes), CheckedEdges(edges)


def check_load(
    nodes: Sequence[NodeRecord],
    edges: Sequence[EdgeRecord],
    vectors: Iterable[VectorRecord],
    profiles: Sequence[ProfileIndexInfo],
) -> None:
    """Raise :class:`DatasetError` for the first record a backend could refuse; write nothing. Nodes
    and edges marked by :func:`checked_records` passed already and are not checked again."""
    for node in () if passed(nodes) else nodes:
        problem = _node_problem(node)
        if problem is not None:
            raise DatasetError(f"{_where_node(node)}: {problem}")
    for edge in () if passed(edges) else edges:
        problem = _identifier(edge.tenant_id, MAX_TENANT_CHARS) or _edge_problem(edge)
        if problem is not None:
            where = f"edge {_cut(edge.edge_type, 64)} {_cut(edge.from_node_id)!r} -> {_cut(edge.to_node_id)!r}"
            raise DatasetError(f"{where} of tenant {_cut(edge.tenant_id)!r}: {problem}")
    problem = _profiles_problem(profiles)
    if problem is not None:
        raise DatasetError(problem)
    dimensions = {profile.profile_id: profile.dimension for profile in profiles}
    for vector in () if passed(vectors) else vectors:
        check_vector(vector, dimensions)


def check_changes(changes: ChangeSet) -> None:
    """:func:`check_load` of a change's records, plus: no node both upserted and deleted, no edge both
    upserted and deleted, every deleted key a valid identifier."""
    check_load(changes.upsert_nodes, changes.upsert_edges, changes.upsert_vectors, changes.profiles)
    upserted = {(n.tenant_id, n.node_id) for n in changes.upsert_nodes}
    for key in changes.delete_nodes:
        problem = _identifier(key.tenant_id, MAX_TENANT_CHARS) or _node_id(key.node_id)
        if problem is not None:
            raise DatasetError(f"deleted node {_cut(key.node_id)!r} of tenant {_cut(key.tenant_id)!r}: {problem}")
        if (key.tenant_id, key.node_id) in upserted:
            raise DatasetError(f"{_where_node_key(key.tenant_id, key.node_id)} is both written and deleted")
    edge_keys = {(e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id) for e in changes.upsert_edges}
    for edge in changes.delete_edges:
        problem = _identifier(edge.tenant_id, MAX_TENANT_CHARS) or _edge_problem(edge)
        if problem is not None:
            where = f"deleted edge {_cut(edge.edge_type, 64)} {_cut(edge.from_node_id)!r} -> {_cut(edge.to_node_id)!r}"
            raise DatasetError(f"{where} of tenant {_cut(edge.tenant_id)!r}: {problem}")
        if (edge.tenant_id, edge.edge_type, edge.from_node_id, edge.to_node_id) in edge_keys:
            raise DatasetError(
                f"edge {_cut(edge.edge_type, 64)} {_cut(edge.from_node_id)!r} -> {_cut(edge.to_node_id)!r} "
                "is both written and deleted"
            )


def _where_node_key(tenant_id: str, node_id: str) -> str:
    return f"node {_cut(node_id)!r} of tenant {_cut(tenant_id)!r}"


def outside_ends(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord]) -> list[tuple[str, str]]:
    """The ends (tenant, node id) of ``edges`` that are not among ``nodes``, each once, sorted: a load
    writes an edge to one only when it is a node already stored in the tenant. Edges whose
    ``ends_among`` is ``nodes`` (a reader that checked every end) have none, read or not."""
    if getattr(edges, "ends_among", None) is nodes:
        return []
    keys = {(node.tenant_id, node.node_id) for node in nodes}
    ends = {(e.tenant_id, node_id) for e in edges for node_id in (e.from_node_id, e.to_node_id)}
    return sorted(ends - keys)


def dangling_edge_error(edges: Sequence[EdgeRecord], missing: set[tuple[str, str]]) -> DatasetError | None:
    """The error of the first of ``edges`` with an end in ``missing`` (no such node, neither loaded nor
    stored), naming that end; ``None`` when there is none."""
    if not missing:
        return None
    for edge in edges:
        for end in (edge.from_node_id, edge.to_node_id):
            if (edge.tenant_id, end) in missing:
                return DatasetError(
                    f"edge {_cut(edge.edge_type, 64)} {_cut(edge.from_node_id)} -> {_cut(edge.to_node_id)}: no node "
                    f"{_cut(end)!r} in tenant {_cut(edge.tenant_id)!r}, neither loaded nor stored (edges never cross "
                    "tenants)"
                )
    return None


def url_problem(url: str) -> str | None:
    """Why ``url`` may not reach a hit, passage or citation (None: it may)."""
    return _url_problem(url)


def node_id_problem(node_id: str) -> str | None:
    """Why ``node_id`` is not a node id brain-graph prints (None: it is)."""
    return _node_id(node_id)
