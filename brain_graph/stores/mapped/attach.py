"""Attach brain-graph to a team's existing graph: suggest a mapping from the live schema, and check a
mapping against the live schema and data (``brain-graph attach --suggest`` / ``--check``).

.. code-block:: python

    from brain_graph.stores.mapped.attach import check_mapping, render_toml, suggest_mapping

    suggested = suggest_mapping(settings)           # MappedSettings, or a Neo4jClient (+ a WeaviateConnection)
    text = render_toml(suggested)                   # TOML; guessed lines end in "# guessed: ..."
    report = check_mapping("team.toml", settings)   # report.problems, report.counts, report.usable

Both only read: Neo4j statements in READ sessions, a bounded sample of each label
(:mod:`.attach_schema`), Weaviate configs and a few objects. The suggestion is valid as it is and,
for a graph with common names, searchable as it is (:mod:`.attach_suggest` says how it chooses);
the check's problems name the mapping key (:mod:`.attach_check`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal

from brain_graph.core.edges import DEFAULT_SAFE_EDGE_TYPES
from brain_graph.core.environment import read_settings
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.stores.mapped.attach_check import CheckReport, Count, Problem, check_live
from brain_graph.stores.mapped.attach_schema import (
    SAMPLE,
    LiveSchema,
    link_collections,
    read_neo4j,
    read_weaviate,
    split_patterns,
)
from brain_graph.stores.mapped.attach_suggest import (
    DEFAULT_PROFILES,
    Guess,
    ProfileSpec,
    SuggestedMapping,
    render_toml,
    suggest_from_schema,
)
from brain_graph.stores.mapped.backend import MappedSettings, neo4j_client, weaviate_parameters
from brain_graph.stores.mapped.mapping import Mapping, WeaviateVectors, read_mapping
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection

__all__ = [
    "DEFAULT_PROFILES",
    "CheckReport",
    "Count",
    "Guess",
    "Problem",
    "ProfileSpec",
    "SuggestedMapping",
    "check_mapping",
    "connection_settings",
    "exit_code",
    "read_live_schema",
    "render_toml",
    "suggest_mapping",
]

Neo4jTarget = Neo4jClient | MappedSettings
WeaviateTarget = WeaviateConnection | Literal[False] | None


def connection_settings(mapping: str | Path | None = None, **overrides: object) -> MappedSettings:
    """The mapped backend's connection settings from the environment (``NEO4J_*``, ``WEAVIATE_*``,
    ``BRAIN_GRAPH_BACKEND_TIMEOUT``); ``mapping`` stands in for ``BRAIN_GRAPH_MAPPING`` (attach needs
    no mapping file to suggest one)."""
    return read_settings(MappedSettings, mapping=Path(mapping or "attach"), **overrides)


def weaviate_connection(settings: MappedSettings) -> WeaviateConnection:
    return WeaviateConnection(**weaviate_parameters(settings))


@contextmanager
def _connections(
    neo4j: Neo4jTarget, weaviate: WeaviateTarget, *, need_weaviate: bool
) -> Iterator[tuple[Neo4jClient, WeaviateConnection | None]]:
    """The clients to read with: the ones given, or opened from settings (and closed after)."""
    opened: list[Neo4jClient | WeaviateConnection] = []
    if isinstance(neo4j, MappedSettings):
        client = neo4j_client(neo4j)
        opened.append(client)
        connection: WeaviateConnection | None = None
        if weaviate is None and need_weaviate:
            connection = weaviate_connection(neo4j)
            opened.append(connection)
        elif weaviate:
            connection = weaviate
    else:
        client, connection = neo4j, (weaviate or None)
    try:
        yield client, connection
    finally:
        for item in opened:
            item.close()


def read_live_schema(
    client: Neo4jClient,
    weaviate: WeaviateConnection | None = None,
    *,
    labels: str | Sequence[str] | None = None,
    sample: int = SAMPLE,
) -> LiveSchema:
    """The live schema :func:`suggest_mapping` works from (``labels``: names or ``*`` patterns, a
    comma list or a list; None: every label). Weaviate that cannot be read is noted, not raised."""
    patterns = split_patterns(labels)
    schema = read_neo4j(client, labels=patterns, sample=sample)
    if weaviate is None:
        return schema
    where = f"Weaviate {weaviate.host}:{weaviate.http_port}"
    skipped: list[str] = []
    try:
        found = read_weaviate(weaviate, labels=schema.considered, skipped=skipped)
        collections = link_collections(client, schema, found)
    except BackendUnavailableError as error:
        return replace(schema, weaviate_where=where, weaviate_problem=str(error))
    notes = list(schema.notes)
    if skipped and patterns is None:
        notes.append(
            f"not read: Weaviate collection(s) {', '.join(skipped[:10])}{' ...' if len(skipped) > 10 else ''}: "
            'not named like a label; map one by hand ([[vectors]] source = "weaviate") if it holds a label\'s vectors'
        )
    return replace(schema, collections=tuple(collections), weaviate_where=where, notes=tuple(notes))


def suggest_mapping(
    neo4j: Neo4jTarget,
    weaviate: WeaviateTarget = None,
    *,
    labels: str | Sequence[str] | None = None,
    profiles: Sequence[ProfileSpec] = DEFAULT_PROFILES,
    safe_edge_types: Collection[str] = DEFAULT_SAFE_EDGE_TYPES,
    sample: int = SAMPLE,
    name: str = "suggested",
) -> SuggestedMapping:
    """A draft mapping of the live graph (see :mod:`.attach_suggest`).

    ``neo4j``: a client, or the connection settings (then Weaviate is read too, from the same settings,
    unless ``weaviate`` is False); ``weaviate``: a connection to read collections from (None with a
    client: Weaviate is not read). ``labels`` restricts the labels read (names or ``*`` patterns);
    ``profiles`` are the embedding profiles with the configured embedders' names and dimensions;
    ``safe_edge_types`` the configured edge allowlist (the draft says which of its edge types it lacks).
    A :class:`~brain_graph.core.errors.ConfigurationError` when nothing can be mapped."""
    with _connections(neo4j, weaviate, need_weaviate=True) as (client, connection):
        schema = read_live_schema(client, connection, labels=labels, sample=sample)
    return suggest_from_schema(schema, profiles=profiles, safe_edge_types=safe_edge_types, name=name)


def check_mapping(
    mapping: Mapping | str | Path,
    neo4j: Neo4jTarget,
    weaviate: WeaviateTarget = None,
    *,
    profiles: Sequence[ProfileSpec] = DEFAULT_PROFILES,
    safe_edge_types: Collection[str] | None = DEFAULT_SAFE_EDGE_TYPES,
    sample: int = SAMPLE,
) -> CheckReport:
    """The problems of ``mapping`` (a :class:`Mapping` or a TOML file) on the live graph, and its counts
    (see :mod:`.attach_check`). ``neo4j``/``weaviate`` as for :func:`suggest_mapping` (Weaviate is
    connected only for a mapping with Weaviate sources). A mapping file that does not parse is a
    :class:`~brain_graph.core.errors.ConfigurationError`; a server that does not answer a
    :class:`BackendUnavailableError`."""
    if not isinstance(mapping, Mapping):
        mapping = read_mapping(mapping)
    need = any(isinstance(config, WeaviateVectors) for config in mapping.vectors)
    with _connections(neo4j, weaviate, need_weaviate=need) as (client, connection):
        return check_live(
            mapping, client, connection, profiles=profiles, safe_edge_types=safe_edge_types, sample=sample
        )


def exit_code(report: CheckReport) -> int:
    """The exit code of ``attach --check``: 0 usable, 2 not (the CLI's code for a bad configuration)."""
    return 0 if report.usable else 2
