"""A draft mapping from a live schema (:class:`~.attach_schema.LiveSchema`), and its TOML text.

Pure: everything here works on what :mod:`.attach_schema` read. The draft follows common names and
says where it guessed (:class:`Guess`, a ``# guessed:`` comment on the line in the TOML):

* node types by label name (words of the name): ``cdm.doc`` for document, chunk, page... labels,
  ``cdm.work_item`` for ticket, issue, task..., ``code.file`` for file, code, function...; cluster,
  community, topic... labels with a membership relationship become ``clusters`` (``kg.cluster``);
  any other label is ``cdm.doc``, guessed. A label is searched when its nodes have the chosen string
  id and a text property (``text``/``body``/``summary``/``description``/``content``, a short text
  ``tagline``/``abstract``/``plot``/``overview``/``caption``, or the properties of a full-text index)
  or a vector index (on the label, or on a marker label all its nodes carry, as LlamaIndex indexes
  its entities on ``__Entity__``). A label with neither is still mapped when its nodes have the id
  and a title and a relationship type links it to a searched label: ``cdm.person`` for person,
  user, author... labels, else ``kg.entity`` (guessed); no profile covers them (reached by
  expansion, never a hit). Marker labels (``__KGBuilder__``, ``__Entity__``, ``__Node__``) are
  never mapped themselves.
* the id: ``id``, ``uuid`` or ``name`` (a property a uniqueness constraint covers first), the one
  most searched labels have; the title ``title``/``name``; the url ``url``/``path``; the tenant
  ``tenantId``/``tenant_id``/``tenant``/``group_id`` when its sampled values are usable tenant ids,
  else one fixed tenant ``default`` (guessed; Graphiti's default ``group_id`` is ``""``).
* facets (seed filters) of a searched label, when it has an obvious property: tags from the first of
  ``tags``/``labels``/``keywords`` holding lists of strings (some single strings allowed); the update
  time from the first update-time-like name (``updatedAt``, ``updated_at``, ``lastModified``,
  ``modified``...) holding Neo4j dates or date-times, ISO-8601 strings brain-graph reads or
  integers (the epoch unit guessed from their size), some of them at least (what it cannot read is
  said in a guess); the path from ``path``/``filePath``/``file_path``; the namespace from ``namespace``.
* every relationship type that starts at and ends at mapped labels is an edge, read as its own name
  upper-snaked (a note says which of them ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` must name to be followed).
* vectors: each Neo4j vector index on a searched label, and each Weaviate collection named like a
  searched label (its id property the one whose sampled values are the label's ids), for the profile
  of the label's node type; made by the configured embedder unless the dimension or the collection's
  vectorizer says otherwise. Vectors in a property that no vector index covers (Graphiti's
  ``name_embedding``) cannot be searched: brain-graph never writes, so a note gives the statement
  that creates the index (the team's write), after which a new suggestion maps it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from brain_graph.core.edges import DEFAULT_SAFE_EDGE_TYPES
from brain_graph.core.errors import ConfigurationError
from brain_graph.core.vocabulary import CLUSTER, CODE_FILE, DOC, HAS_SIGNAL, IN_CLUSTER, WORK_ITEM
from brain_graph.stores.mapped.attach_schema import (
    ID_LIKE,
    ID_NAMES,
    TEMPORAL_TYPES,
    TENANT_NAMES,
    UPDATED_NAMES,
    CollectionInfo,
    IndexInfo,
    LabelStats,
    LiveSchema,
    VectorInfo,
    collection_matches,
    id_candidates,
)
from brain_graph.stores.mapped.facets import read_iso
from brain_graph.stores.mapped.mapping import ELEMENT_ID, GRAPH_NAME, parse_mapping
from brain_graph.stores.mapped.mapping import Mapping as GraphMapping

TITLE_NAMES = ("title", "name")
URL_NAMES = ("url", "path")
SECURED_NAMES = ("secured", "restricted", "private", "confidential", "isPrivate", "is_private")
ACL_NAMES = ("acl", "readers", "allowed", "permissions", "allowedPrincipals", "allowed_principals")
FIXED_TENANT = "default"
# Short texts (a movie's tagline, a paper's abstract): the summary field, or a doc's body (a doc's
# passage is its title and body) when it has no longer text.
SHORT_TEXT_NAMES = ("tagline", "abstract", "plot", "overview", "caption")
# Passage fields per node type, each from the first of its properties present.
TEXT_FIELDS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    DOC: (("body", ("body", "text", "content", "description", "summary", *SHORT_TEXT_NAMES)),),
    WORK_ITEM: (
        ("summary", ("summary", "text", "body", "content", *SHORT_TEXT_NAMES)),
        ("description", ("description", "body", "content", "text")),
    ),
    CODE_FILE: (
        ("summary", ("summary", "description", *SHORT_TEXT_NAMES)),
        ("body", ("content", "body", "text", "code", "source")),
    ),
    CLUSTER: (("summary", ("summary", "description", "text", "body", "content", *SHORT_TEXT_NAMES)),),
}
TEXT_NAMES = ("text", "body", "summary", "description", "content", *SHORT_TEXT_NAMES)
# Words that make a property's name a text's (one of them among its words: ``body_markdown``)
TEXT_WORDS = frozenset({*TEXT_NAMES, "bio", "biography", "markdown", "article", "excerpt", "snippet", "paragraph"})
# Labels mapped only to be reached by following edges (no text, no vectors: never a vector hit).
PERSON = "cdm.person"
ENTITY = "kg.entity"
PERSON_WORDS = frozenset(
    {"person", "people", "user", "author", "actor", "member", "employee", "contributor", "owner", "contact"}
)
CLUSTER_WORDS = frozenset({"cluster", "community", "topic", "theme", "episode"})
WORK_WORDS = frozenset(
    {"ticket", "issue", "task", "story", "bug", "epic", "incident", "workitem", "todo", "feature", "request"}
)
CODE_WORDS = frozenset({"file", "code", "source", "sourcefile", "function", "method", "class", "module", "snippet"})
DOC_WORDS = frozenset(
    {
        "document",
        "doc",
        "chunk",
        "page",
        "article",
        "passage",
        "section",
        "paragraph",
        "note",
        "wiki",
        "post",
        "faq",
        "manual",
        "text",
    }
)
VECTOR_NAMES = ("body", "text", "content", "summary", "default", "embedding", "vector")
TAG_NAMES = ("tags", "labels", "keywords")
PATH_NAMES = ("path", "filePath", "file_path")
NAMESPACE_NAMES = ("namespace",)
FACET_KEYS = ("tags_property", "updated_at_property", "updated_at_unit", "namespace_property", "path_property")
# epoch numbers of years 1973 to 5138 in each unit: [low, high) -> unit
EPOCH_RANGES = ((10**8, 10**11, "seconds"), (10**11, 10**14, "milliseconds"), (10**14, 10**17, "microseconds"))
# lists of floats this long are taken for vectors when no index covers them (a note says so)
MIN_NOTED_DIMENSION = 16


@dataclass(frozen=True)
class ProfileSpec:
    """A brain-graph embedding profile as attach needs it: the node type it embeds, and the name and
    dimension of the embedder configured for it (None: unknown)."""

    profile_id: str
    node_type: str
    embedder: str | None = None
    dimension: int | None = None


# brain-graph's default profiles (brain_graph.embedding.profiles.BASE_PROFILES; a unit test keeps them equal)
DEFAULT_PROFILES = (
    ProfileSpec("cdm.work.summary", WORK_ITEM),
    ProfileSpec("cdm.doc.body", DOC),
    ProfileSpec("code.file.summary", CODE_FILE),
)


@dataclass(frozen=True)
class Guess:
    """A value the draft guessed: its mapping key (as :func:`render_toml` writes it) and why."""

    key: str
    reason: str


@dataclass(frozen=True)
class SuggestedMapping:
    """A draft mapping (valid as it is), what it guessed, notes on what it left out, and where it
    was read from."""

    mapping: GraphMapping
    guesses: tuple[Guess, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = ""
    edge_notes: tuple[str, ...] = field(default=())

    def guessed(self, key: str) -> list[str]:
        """The reasons of the guesses about ``key``."""
        return [guess.reason for guess in self.guesses if guess.key == key]


def words(name: str) -> list[str]:
    """The lower-case words of a label: split at ``_``, ``-``, digits and camel-case humps."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name))
    found = [word.lower() for word in re.split(r"[^A-Za-z]+", spaced) if word]
    return [*found, "".join(found)] if len(found) > 1 else found


def _names(name: str, vocabulary: frozenset[str]) -> bool:
    return any(word in vocabulary or word.rstrip("s") in vocabulary for word in words(name))


def node_type_of_label(label: str) -> tuple[str, bool]:
    """The node type a label's name suggests, and whether it is a guess (no rule matched: ``cdm.doc``).
    A cluster-like label gives ``kg.cluster`` (used when it has a membership relationship)."""
    for vocabulary, node_type in (
        (CLUSTER_WORDS, CLUSTER),
        (WORK_WORDS, WORK_ITEM),
        (CODE_WORDS, CODE_FILE),
        (DOC_WORDS, DOC),
    ):
        if _names(label, vocabulary):
            return node_type, False
    return DOC, True


def linked_node_type(label: str) -> str:
    """The node type of a label mapped only because it is linked to searched labels: ``cdm.person``
    for person, user, author... labels, else ``kg.entity``."""
    return PERSON if _names(label, PERSON_WORDS) else ENTITY


def linked_labels(schema: LiveSchema, candidates: Iterable[str], searched: Collection[str]) -> list[str]:
    """The ``candidates`` with a title (``title``/``name``, else ``path``) that some relationship type
    links to ``searched`` labels (starting at one and ending at the other)."""
    counts = schema.rel_counts
    found = []
    for label in candidates:
        stats = schema.stats[label]
        if not any(stats.string(p) for p in (*TITLE_NAMES, "path")):
            continue
        if any(
            (counts.out.get((label, t)) and counts.ending(searched, t))
            or (counts.into.get((label, t)) and counts.starting(searched, t))
            for t in schema.rel_types
        ):
            found.append(label)
    return found


def upper_snake(name: str) -> str | None:
    """A relationship type as a brain-graph edge type (``nextChunk`` -> ``NEXT_CHUNK``); None when it
    cannot be one."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    snake = re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()
    snake = re.sub(r"_+", "_", snake)
    return snake if re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", snake) else None


def text_fields(stats: LabelStats, node_type: str, fulltext: Sequence[str] = ()) -> tuple[dict[str, str], bool]:
    """A label's passage fields (field -> property) for ``node_type``, and whether they were guessed
    (taken from a full-text index's properties because no common text property is there)."""
    found: dict[str, str] = {}
    for passage_field, names in TEXT_FIELDS[node_type]:
        prop = next((n for n in names if stats.string(n) and n not in found.values()), None)
        if prop is not None:
            found[passage_field] = prop
    if found:
        return found, False
    spare = [prop for prop in fulltext if stats.string(prop) and prop not in TITLE_NAMES]
    if not spare:  # a property named like a text (body_markdown, plotText, shortDescription, bio...)
        spare = sorted(
            (prop for prop in stats.properties if stats.string(prop) and _names(prop, TEXT_WORDS)),
            key=lambda prop: (-stats.present(prop), prop),
        )
    if spare:
        return {TEXT_FIELDS[node_type][0][0]: spare[0]}, True
    return {}, False


@dataclass
class _Draft:
    """The mapping being built, with its guesses and notes."""

    data: dict[str, Any] = field(default_factory=dict)
    guesses: list[Guess] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    edge_notes: list[str] = field(default_factory=list)

    def guess(self, key: str, reason: str) -> None:
        self.guesses.append(Guess(key, reason))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _shown(names: Iterable[str], limit: int = 8) -> str:
    items = list(names)
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def choose_id(schema: LiveSchema, vector_labels: set[str], text_labels: set[str]) -> tuple[str | None, bool]:
    """The id property (the one most labels with vector indexes, then with text, have as a string;
    a uniqueness constraint, then ``id``, ``uuid``, ``name`` first), and whether it is a guess."""
    candidates: dict[str, tuple[int, int, int, int]] = {}
    order = [*ID_NAMES, *ID_LIKE]
    for label in sorted(vector_labels | text_labels):
        stats = schema.stats[label]
        constrained = [p for p in stats.properties if schema.unique(label, p)]
        for prop in id_candidates(stats, constrained):
            if prop == "name" and prop not in constrained:
                continue  # names name things, they seldom key them: only a constraint makes them an id
            v, t, c, rank = candidates.get(prop, (0, 0, 0, -(order.index(prop) if prop in order else len(order))))
            candidates[prop] = (
                v + (label in vector_labels),
                t + (label in text_labels),
                c + schema.unique(label, prop),
                rank,
            )
    if not candidates:
        return None, False
    best = max(sorted(candidates), key=lambda prop: candidates[prop])
    labels = vector_labels | text_labels
    constrained_everywhere = all(schema.unique(label, best) for label in labels if _id_type(schema, label, best))
    return best, best not in ("id", "uuid") and not constrained_everywhere


def _id_type(schema: LiveSchema, label: str, prop: str) -> str | None:
    """``string`` or ``integer`` when the sampled nodes of ``label`` hold ``prop`` as one (else None)."""
    stats = schema.stats[label]
    return "string" if stats.string(prop) else "integer" if stats.integer(prop) and prop != "name" else None


def _own_id(label: str, prop: str) -> bool:
    """Whether ``prop`` is named as the id of ``label`` (``categoryID``, ``category_id``, ``CategoryId``)."""
    squeezed = re.sub(r"[^a-z0-9]", "", prop.lower())
    parts = words(label)
    last = parts[-2] if len(parts) > 1 else parts[-1] if parts else ""  # words() ends with the joined form
    return squeezed in {f"{name}id" for name in (re.sub(r"[^a-z0-9]", "", label.lower()), last) if name}


def label_id(schema: LiveSchema, label: str, common: str) -> tuple[str, str]:
    """The id of a label's nodes: the ``common`` id property when they hold it, else one a uniqueness
    constraint covers, else ``id`` or ``uuid``, else one named after the label (``categoryID``), else
    their element id; with its type."""
    stats = schema.stats[label]
    constrained = sorted(p for p in stats.properties if schema.unique(label, p))
    own = sorted(p for p in stats.properties if _own_id(label, p))  # a Category's categoryID
    for prop in [*([common] if common != ELEMENT_ID else []), *constrained, "id", "uuid", *own]:
        found = _id_type(schema, label, prop)
        if found is not None and prop not in TENANT_NAMES:
            return prop, found
    return ELEMENT_ID, "string"


def epoch_unit(values: Sequence[str]) -> str | None:
    """The epoch unit all of ``values`` (integers as text) fit (:data:`EPOCH_RANGES`), else None."""
    numbers = [int(value) for value in values if re.fullmatch(r"-?[0-9]+", value)]
    if not numbers or len(numbers) < len(values):
        return None
    units = {next((unit for low, high, unit in EPOCH_RANGES if low <= number < high), None) for number in numbers}
    return units.pop() if len(units) == 1 else None


def facet_properties(stats: LabelStats) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The facet keys of a label (see the module docstring), and the guesses among them (key, reason)."""
    found: dict[str, str] = {}
    guesses: list[tuple[str, str]] = []
    tags = next((p for p in TAG_NAMES if (held := stats.properties.get(p)) and held.tag_like), None)
    if tags is not None:
        found["tags_property"] = tags
    for name in UPDATED_NAMES:
        held = stats.properties.get(name)
        if held is None or not held.types or not set(held.types) <= {*TEMPORAL_TYPES, "STRING", "INTEGER"}:
            continue
        values = stats.time_values.get(name, ())
        integers = "INTEGER" in held.types
        numbers = [value for value in values if integers and re.fullmatch(r"-?[0-9]+", value)]
        strings = [value for value in values if value not in numbers]
        readable = sum(read_iso(value) is not None for value in strings)
        unit = epoch_unit(numbers) if numbers else None
        if not (held.any_temporal or readable or unit):
            continue
        found["updated_at_property"] = name
        if unit is not None:
            found["updated_at_unit"] = unit
            guesses.append(("updated_at_unit", f"integers of the size of {unit} since 1970"))
        elif numbers:
            guesses.append(
                ("updated_at_property", "its numbers fit no one epoch unit: they are no time without updated_at_unit")
            )
        if readable < len(strings):
            guesses.append(
                (
                    "updated_at_property",
                    f"{len(strings) - readable} of {len(strings)} sampled strings are no ISO-8601 time brain-graph "
                    "reads: those nodes have no update time",
                )
            )
        break
    path = next((p for p in PATH_NAMES if stats.string(p)), None)
    if path is not None:
        found["path_property"] = path
    namespace = next((p for p in NAMESPACE_NAMES if stats.string(p)), None)
    if namespace is not None:
        found["namespace_property"] = namespace
    return found, guesses


def _fulltext(schema: LiveSchema, label: str) -> list[str]:
    return [prop for index in schema.node_indexes(label, "FULLTEXT") for prop in index.properties]


def _vector_indexes(schema: LiveSchema, label: str) -> list[IndexInfo]:
    return schema.vector_indexes(label)


def create_vector_index(label: str, prop: str, dimension: int | None) -> str:
    """The statement that creates a cosine vector index on ``label``'s ``prop`` (named
    ``<label>_<prop>``, lower case; the dimension left to Neo4j when unknown)."""
    config = f"`vector.dimensions`: {dimension}, " if dimension else ""
    name = f"{label}_{prop}".lower()
    return (
        f"CREATE VECTOR INDEX `{name}` IF NOT EXISTS FOR (n:`{label}`) ON n.`{prop}` "
        f"OPTIONS {{indexConfig: {{{config}`vector.similarity_function`: 'cosine'}}}}"
    )


def unindexed_vectors(schema: LiveSchema, label: str) -> list[str]:
    """Notes on the properties of ``label`` that hold vectors (lists of numbers) no vector index
    covers: brain-graph searches vectors only through an index and never creates one."""
    indexed = {index.properties[0] for index in _vector_indexes(schema, label)}
    notes = []
    for stats in schema.stats[label].properties.values():
        floats = "LIST<FLOAT>" in stats.types and stats.is_vector
        if not floats or not stats.sizes or min(stats.sizes) < MIN_NOTED_DIMENSION or stats.name in indexed:
            continue
        dimension = stats.sizes[0] if len(set(stats.sizes)) == 1 else None
        notes.append(
            f"{label}.{stats.name} holds vectors but has no vector index, and brain-graph searches vectors only "
            f"through one (it never writes): to search them, create it, then suggest again: "
            f"{create_vector_index(label, stats.name, dimension)}"
        )
    return notes


def suggest_from_schema(
    schema: LiveSchema,
    *,
    profiles: Sequence[ProfileSpec] = DEFAULT_PROFILES,
    safe_edge_types: Collection[str] = DEFAULT_SAFE_EDGE_TYPES,
    name: str = "suggested",
) -> SuggestedMapping:
    """The draft mapping of ``schema`` (see the module docstring); a :class:`ConfigurationError` when
    no label can be searched."""
    draft = _Draft(notes=list(schema.notes))
    profile_of = {spec.node_type: spec for spec in profiles}
    live = [label for label in schema.considered if schema.stats[label].count]
    empty = [label for label in schema.considered if not schema.stats[label].count]
    if empty:
        draft.notes.append(f"not mapped: {_shown(empty)}: no nodes")

    # -- which labels: text or a vector index, and a string id -------------------------------------
    typed = {label: node_type_of_label(label) for label in live}
    texts: dict[str, tuple[dict[str, str], bool]] = {}
    for label in live:
        node_type = typed[label][0]
        texts[label] = text_fields(schema.stats[label], node_type, _fulltext(schema, label))
    vector_labels = {label for label in live if _vector_indexes(schema, label)}
    text_labels = {label for label in live if texts[label][0]}
    cluster_like = {label for label in live if typed[label][0] == CLUSTER}
    chosen, id_guessed = choose_id(schema, vector_labels, text_labels | cluster_like)
    id_property = chosen if chosen is not None else ELEMENT_ID
    if chosen is None:
        draft.notes.append(
            f"no id property ({', '.join(ID_NAMES)}) on the searched labels: nodes are named by their Neo4j element "
            "id (stable while a node exists; a node deleted and created again gets a new one)"
        )
    draft.data["id_property"] = id_property
    if id_guessed:
        draft.guess("id_property", f"no uniqueness constraint on {id_property!r}: check that it names one node")
    ids = {label: label_id(schema, label, id_property) for label in live}
    searched = [label for label in live if label in vector_labels or label in text_labels]
    if not searched:
        raise ConfigurationError(
            f"attach: nothing to map in {schema.where}: no label among {_shown(live) or 'none'} has a text property "
            f"({', '.join(TEXT_NAMES)}) or a vector index"
        )
    linked = linked_labels(
        schema, [label for label in live if label not in searched and label not in cluster_like], searched
    )
    left = [label for label in live if label not in searched and label not in cluster_like and label not in linked]
    for label in left:
        stats = schema.stats[label]
        why = f"no text property ({'/'.join(TEXT_NAMES)}) and no vector index"
        draft.notes.append(f"not mapped: {label} ({_plural(stats.count, 'node')}): {why}")
        draft.notes += unindexed_vectors(schema, label)
    for label in live:
        if label not in left:
            draft.notes += unindexed_vectors(schema, label)

    # -- clusters -----------------------------------------------------------------------------------
    members = [label for label in searched if typed[label][0] != CLUSTER]
    clusters: tuple[str, str] | None = None
    for label in sorted(cluster_like, key=lambda lb: (-schema.stats[lb].count, lb)):
        if clusters is not None:
            continue
        memberships = [
            rel_type
            for rel_type in schema.rel_types
            if schema.rel_counts.starting(members, rel_type) and schema.rel_counts.into.get((label, rel_type))
        ]
        memberships.sort(key=lambda t: (-schema.rel_counts.into.get((label, t), 0), t))
        if memberships:
            clusters = (label, memberships[0])
            if len(memberships) > 1:
                draft.guess(
                    "clusters.membership",
                    f"the relationship most nodes of {label} have from searched nodes; also: {_shown(memberships[1:])}",
                )
    for label in sorted(cluster_like):
        if clusters is not None and label == clusters[0]:
            continue
        if label not in searched:
            draft.notes.append(
                f"not mapped: {label}: clusters need a membership relationship from searched nodes to them"
            )
            continue
        typed[label] = (DOC, True)
        texts[label] = text_fields(schema.stats[label], DOC, _fulltext(schema, label))
        draft.notes.append(
            f"{label} looks like clusters, but no relationship leads to it from searched nodes "
            "((member)-[:MEMBERSHIP]->(cluster)): mapped as cdm.doc"
        )
    members = [label for label in searched if not (clusters is not None and label == clusters[0])]
    if not members:
        raise ConfigurationError(f"attach: nothing to map in {schema.where}: no searched label besides clusters")
    mapped = [*members, *linked, *([clusters[0]] if clusters else [])]

    # -- common properties --------------------------------------------------------------------------
    def on(prop: str, kind: str = "string") -> list[str]:
        """The mapped labels whose sampled nodes hold ``prop`` as a string (a boolean, a list of strings)."""
        found = []
        for label in mapped:
            stats = schema.stats[label].properties.get(prop)
            if (
                stats is not None
                and {
                    "string": stats.is_string,
                    "boolean": stats.is_boolean,
                    "string_list": stats.is_string_list,
                }[kind]
            ):
                found.append(label)
        return found

    def tenanted(prop: str) -> list[str]:
        """The mapped labels with sampled nodes holding ``prop`` as a usable tenant id."""
        return [label for label in on(prop) if schema.stats[label].usable_tenants(prop)]

    ranked = sorted(TENANT_NAMES, key=lambda p: (-len(tenanted(p)), TENANT_NAMES.index(p)))
    tenant = next((p for p in ranked if tenanted(p)), None)
    blank = [p for p in TENANT_NAMES if on(p) and not tenanted(p)]
    if tenant is not None:
        draft.data["tenant"] = {"property": tenant}
        lacking = [label for label in mapped if label not in tenanted(tenant)]
        if lacking:
            draft.guess("tenant", f"{_shown(lacking)} have no {tenant!r}: their nodes are in no tenant")
        unusable = sum(schema.stats[label].unusable_tenants.get(tenant, 0) for label in mapped)
        if unusable:
            draft.guess(
                "tenant",
                f"{_plural(unusable, 'sampled node')} of the mapped labels have a blank {tenant!r} (no usable tenant "
                "id): no search finds them",
            )
    elif blank:
        draft.data["tenant"] = {"fixed": FIXED_TENANT}
        draft.guess(
            "tenant",
            f'every sampled {blank[0]!r} is blank or no usable tenant id (Graphiti\'s default group_id is ""): the '
            f"whole graph is one tenant, searched as --tenant {FIXED_TENANT}",
        )
    else:
        draft.data["tenant"] = {"fixed": FIXED_TENANT}
        draft.guess(
            "tenant",
            f"no {'/'.join(TENANT_NAMES)} property: the whole graph is one tenant, searched as --tenant {FIXED_TENANT}",
        )
    titles = [p for p in TITLE_NAMES if on(p)]
    untitled = [label for label in mapped if not any(schema.stats[label].string(p) for p in TITLE_NAMES)]
    if untitled and [label for label in untitled if schema.stats[label].string("path")]:
        titles.append("path")
        draft.guess("title_properties", f"{_shown(untitled)} have no title or name: their path is their title")
    draft.data["title_properties"] = titles
    url = next((p for p in URL_NAMES if on(p)), None)
    if url is not None:
        draft.data["url_property"] = url
    secured = next((p for p in SECURED_NAMES if on(p, "boolean")), None)
    acl = next((p for p in ACL_NAMES if on(p, "string_list")), None)
    if secured is not None:
        draft.data["secured_property"] = secured
        draft.guess("secured_property", f"boolean {secured!r}: nodes where it is not false are secured")
        if acl is not None:
            draft.data["acl_property"] = acl
            draft.guess("acl_property", f"list of strings {acl!r}: entries user:<id> and group:<name>")
    elif acl is not None:
        draft.notes.append(
            f"property {acl!r} looks like access control lists, but no boolean secured property was found: "
            "every node is public to searches; set secured_property and acl_property to restrict them"
        )

    # -- nodes --------------------------------------------------------------------------------------
    by_count = sorted(mapped, key=lambda lb: (-schema.stats[lb].count, lb))
    common_type = next((ids[lb][1] for lb in by_count if ids[lb][0] == id_property), "string")
    if common_type != "string":
        draft.data["id_type"] = common_type

    def own_id(entry: dict[str, Any], label: str) -> None:
        """The label's own id property and type, where they are not the mapping's."""
        prop, id_type = ids[label]
        if prop != id_property:
            entry["id_property"] = prop
            if prop != ELEMENT_ID and not schema.unique(label, prop) and prop not in ("id", "uuid"):
                draft.guess(f"nodes.{label}.id_property", f"no uniqueness constraint on {prop!r}")
        if prop != ELEMENT_ID and id_type != common_type:
            entry["id_type"] = id_type

    nodes = []
    for label in members:
        node_type, type_guessed = typed[label]
        fields, fields_guessed = texts[label]
        entry: dict[str, Any] = {"label": label, "node_type": node_type}
        if fields:
            entry["text"] = fields
        own_id(entry, label)
        facets, facet_guesses = facet_properties(schema.stats[label])
        entry.update(facets)
        for key, reason in facet_guesses:
            draft.guess(f"nodes.{label}.{key}", reason)
        nodes.append(entry)
        if type_guessed:
            draft.guess(f"nodes.{label}.node_type", "the label's name says nothing of its kind")
        if fields_guessed:
            draft.guess(f"nodes.{label}.text", "no common text property: a full-text index's, or one named like a text")
    for label in linked:
        entry = {"label": label, "node_type": linked_node_type(label)}
        own_id(entry, label)
        nodes.append(entry)
        draft.guess(
            f"nodes.{label}.node_type",
            "no text and no vectors, linked to searched labels: reached by following edges, never a vector hit",
        )
    draft.data["nodes"] = nodes
    if clusters is not None:
        label, membership = clusters
        entry = {"label": label, "membership": membership}
        fields = text_fields(schema.stats[label], CLUSTER, _fulltext(schema, label))[0]
        if fields:
            entry["text"] = fields
        own_id(entry, label)
        draft.data["clusters"] = entry

    # -- edges --------------------------------------------------------------------------------------
    edges = []
    for rel_type in schema.rel_types:
        if clusters is not None and rel_type == clusters[1]:
            continue
        if not (schema.rel_counts.starting(mapped, rel_type) and schema.rel_counts.ending(mapped, rel_type)):
            continue
        as_type = upper_snake(rel_type) if GRAPH_NAME.match(rel_type) else None
        if as_type is None or as_type == IN_CLUSTER:
            draft.notes.append(f"not followed: relationship type {rel_type!r}: no brain-graph edge type for it")
            continue
        edges.append({"type": rel_type, "as": as_type})
    draft.data["edges"] = edges
    unsafe = sorted({edge["as"] for edge in edges} - set(safe_edge_types) - {HAS_SIGNAL})
    if unsafe:
        allowed = sorted({*safe_edge_types, *unsafe})
        draft.edge_notes.append(
            f"brain-graph follows only the edge types in BRAIN_GRAPH_SAFE_EDGE_TYPES; {', '.join(unsafe)} "
            f"are not among them: to follow them, set BRAIN_GRAPH_SAFE_EDGE_TYPES={','.join(allowed)}"
        )

    # -- vectors ------------------------------------------------------------------------------------
    vectors = _neo4j_vectors(schema, draft, members, typed, profile_of)
    vectors += _weaviate_vectors(schema, draft, members, typed, profile_of, {v["profile"] for v in vectors})
    draft.data["vectors"] = vectors
    if not vectors:
        draft.notes.append(
            "no vectors found for the searched labels (no Neo4j vector index, no Weaviate collection named like "
            "them): searches find nothing until [[vectors]] name where their vectors are"
        )
    if schema.weaviate_problem:
        draft.notes.append(f"Weaviate not read: {schema.weaviate_problem}")
    draft.data["name"] = name
    mapping = parse_mapping(draft.data, origin="attach: the suggested mapping")
    return SuggestedMapping(mapping, tuple(draft.guesses), tuple(draft.notes), schema.where, tuple(draft.edge_notes))


def _embedder(
    draft: _Draft, key: str, spec: ProfileSpec, dimension: int | None, made_by: str | None = None
) -> str | None:
    """The embedder to name for a profile's vectors: the configured one, guessed, unless their
    dimension or ``made_by`` (a vectorizer) says another made them (then a note, and None)."""
    profile = spec.profile_id
    if made_by is not None:
        draft.notes.append(
            f"vectors.{profile}: the vectors are made by {made_by}: configure that model as the embedder of "
            f"{profile} (BRAIN_GRAPH_PROFILE_EMBEDDERS) and name it in vectors.{profile}.embedder"
        )
        return None
    if dimension is not None and spec.dimension is not None and dimension != spec.dimension:
        draft.notes.append(
            f"vectors.{profile}: the vectors have dimension {dimension}, the configured embedder of {profile} "
            f"({spec.embedder or 'unknown'}) makes {spec.dimension}: configure the embedder that made them "
            "(BRAIN_GRAPH_PROFILE_EMBEDDERS) and name it in embedder"
        )
        return None
    if spec.embedder is None:
        return None
    shown = f"dimension {dimension}" if dimension is not None else "dimension unknown"
    draft.guess(
        f"{key}.embedder",
        f"assumed made by the configured embedder ({shown}): name the model that made them if it is another",
    )
    return spec.embedder


def _neo4j_vectors(
    schema: LiveSchema,
    draft: _Draft,
    members: Sequence[str],
    typed: Mapping[str, tuple[str, bool]],
    profile_of: Mapping[str, ProfileSpec],
) -> list[dict[str, Any]]:
    chosen: dict[str, tuple[IndexInfo, str]] = {}
    for label in sorted(members, key=lambda lb: (-schema.stats[lb].count, lb)):
        for index in _vector_indexes(schema, label):
            spec = profile_of.get(typed[label][0])
            if spec is None:
                draft.notes.append(f"not mapped: vector index {index.name!r}: no profile embeds {typed[label][0]}")
                continue
            if spec.profile_id in chosen and chosen[spec.profile_id][0].name == index.name:
                continue  # one index on a marker label holds the vectors of several labels
            if spec.profile_id in chosen:
                draft.notes.append(
                    f"not mapped: vector index {index.name!r} on {label}: profile {spec.profile_id} already reads "
                    f"{chosen[spec.profile_id][0].name!r} (a profile has one vector source)"
                )
                continue
            chosen[spec.profile_id] = (index, label)
    vectors = []
    for profile, (index, label) in sorted(chosen.items()):
        spec = next(s for s in profile_of.values() if s.profile_id == profile)
        key = f"vectors.{profile}"
        entry: dict[str, Any] = {
            "profile": profile,
            "source": "neo4j",
            "index": index.name,
            "property": index.properties[0],
        }
        sizes = schema.stats[label].properties.get(index.properties[0])
        dimension = index.dimension or (sizes.sizes[0] if sizes is not None and len(sizes.sizes) == 1 else None)
        embedder = _embedder(draft, key, spec, dimension)
        if embedder is not None:
            entry["embedder"] = embedder
        if index.similarity not in (None, "cosine"):
            draft.notes.append(
                f"{key}: index {index.name!r} ranks by {index.similarity}, brain-graph scores by cosine: candidates "
                "are found by the index's metric, then re-scored"
            )
        if index.state != "ONLINE":
            draft.notes.append(f"{key}: index {index.name!r} is {index.state}, not ONLINE")
        vectors.append(entry)
    return vectors


MAX_TENANTS_MATCHED = 100  # sampled graph tenants a tenant name rule is tried on (and 5x as many Weaviate tenants)


def tenant_pattern(graph_tenants: Sequence[str], weaviate_tenants: Sequence[str]) -> tuple[str, int]:
    """The Weaviate tenant name rule (``prefix{tenant}suffix``) under which the most of ``graph_tenants``
    are among ``weaviate_tenants``, and how many; ties: the shortest rule, then the first in order
    (``{tenant}`` when none matches)."""
    held = set(weaviate_tenants)
    graph_tenants = list(graph_tenants)[:MAX_TENANTS_MATCHED]
    rules: set[tuple[str, str]] = {("", "")}
    for name in list(weaviate_tenants)[: MAX_TENANTS_MATCHED * 5]:
        for value in graph_tenants:
            start = name.find(value)
            while start >= 0:
                rules.add((name[:start], name[start + len(value) :]))
                start = name.find(value, start + 1)

    def matched(rule: tuple[str, str]) -> int:
        return sum(f"{rule[0]}{value}{rule[1]}" in held for value in graph_tenants)

    best = min(sorted(rules), key=lambda rule: (-matched(rule), len(rule[0]) + len(rule[1])))
    return f"{best[0]}{{tenant}}{best[1]}", matched(best)


def _best_vector(collection: CollectionInfo, dimension: int | None = None) -> tuple[VectorInfo | None, bool]:
    """The vector to search (None: none usable) and whether it was a choice among several: one of the
    configured embedder's ``dimension`` first (when only one has it, no choice), then by name."""
    usable = [vector for vector in collection.vectors if not vector.multi_vector]
    fitting = [vector for vector in usable if dimension is not None and vector.dimension == dimension]
    if len(fitting) == 1:
        return fitting[0], False
    usable = fitting or usable
    if len(usable) <= 1:
        return (usable[0] if usable else None), False
    ranked = sorted(
        usable,
        key=lambda v: (VECTOR_NAMES.index(v.name) if v.name in VECTOR_NAMES else len(VECTOR_NAMES), v.name or ""),
    )
    return ranked[0], True


def _weaviate_vectors(
    schema: LiveSchema,
    draft: _Draft,
    members: Sequence[str],
    typed: Mapping[str, tuple[str, bool]],
    profile_of: Mapping[str, ProfileSpec],
    taken: set[str],
) -> list[dict[str, Any]]:
    own_ids = {node["label"]: node.get("id_property", draft.data["id_property"]) for node in draft.data["nodes"]}
    tenant = draft.data["tenant"]
    vectors: list[dict[str, Any]] = []
    for collection in schema.collections or ():
        label = next((lb for lb in members if collection_matches(collection.name, lb)), None)
        if label is None:
            continue
        id_property = str(own_ids[label])
        spec = profile_of.get(typed[label][0])
        where = f"Weaviate collection {collection.name!r}"
        if spec is None:
            continue
        if spec.profile_id in taken:
            draft.notes.append(f"not mapped: {where}: profile {spec.profile_id} already has a vector source")
            continue
        key = f"vectors.{spec.profile_id}"
        kinds = {prop: kind for prop, kind in collection.properties.items() if kind in ("text", "uuid", "int")}
        hits = {
            prop: count
            for (prop, lb, label_prop), count in collection.links.items()
            if lb == label and label_prop == id_property and prop in kinds
        }
        guessed_id = False
        object_id: str | None
        if hits:
            object_id = max(sorted(hits), key=lambda prop: hits[prop])
        else:
            names = [id_property, "nodeId", "node_id", *ID_LIKE, *ID_NAMES]
            object_id = next((prop for prop in names if prop in kinds), None)
            if object_id is None and len(kinds) == 1:
                (object_id,) = kinds
            guessed_id = True
        if object_id is None:
            draft.notes.append(f"not mapped: {where}: no text, uuid or int property names its node")
            continue
        vector, chose = _best_vector(collection, spec.dimension)
        if vector is None:
            draft.notes.append(f"not mapped: {where}: no single vector to search")
            continue
        entry: dict[str, Any] = {
            "profile": spec.profile_id,
            "source": "weaviate",
            "collection": collection.name,
            "id_property": object_id,
        }
        if guessed_id:
            draft.guess(
                f"{key}.id_property", f"no sampled object's {object_id!r} was found as a node's {id_property!r}"
            )
        others = [v.name for v in collection.vectors if v.name and v.name != vector.name]
        if vector.name is not None and others:
            entry["vector"] = vector.name
            if chose:
                draft.guess(f"{key}.vector", f"one of several named vectors (also: {_shown(others)})")
        if collection.multi_tenant:
            shown = _shown(collection.tenants, 5) or "none active"
            graph_tenants = sorted(
                {
                    value
                    for lb in members
                    for value in schema.stats[lb].tenant_values.get(tenant.get("property", ""), ())
                }
            )
            pattern, matched = tenant_pattern(graph_tenants, collection.tenants)
            entry["tenant_name"] = pattern
            if "fixed" in tenant and tenant["fixed"] not in collection.tenants:
                if len(collection.tenants) != 1:
                    draft.notes.append(
                        f"not mapped: {where}: it has {collection.tenant_count} Weaviate tenants ({shown}) and "
                        "the graph has no tenant property to tell them apart"
                    )
                    continue
                tenant["fixed"] = collection.tenants[0]
                draft.guess("tenant", f"the one Weaviate tenant of {collection.name!r}")
            draft.guess(
                f"{key}.tenant_name",
                f"{matched} of the {len(graph_tenants)} sampled tenants of the graph are Weaviate tenants named so "
                f"({shown})"
                if graph_tenants
                else f"a brain-graph tenant is the Weaviate tenant of its name ({shown})",
            )
        elif "property" in tenant:
            held = next((p for p in (tenant["property"], *TENANT_NAMES) if kinds.get(p) == "text"), None)
            if held is None:
                draft.notes.append(
                    f"not mapped: {where}: the graph's tenant is a node property, and the collection has neither "
                    "multi-tenancy nor a tenant property"
                )
                continue
            entry["tenant_property"] = held
        made_by = (
            f"Weaviate's vectorizer {vector.vectorizer}" + (f" (model {vector.model})" if vector.model else "")
            if vector.vectorizer not in (None, "none")
            else None
        )
        embedder = _embedder(draft, key, spec, vector.dimension, made_by)
        if embedder is not None:
            entry["embedder"] = embedder
        if vector.metric not in (None, "cosine"):
            draft.notes.append(
                f"{key}: {where} ranks by {vector.metric}, brain-graph scores by cosine: candidates are found by "
                "the collection's metric, then re-scored"
            )
        vectors.append(entry)
        taken.add(spec.profile_id)
    return vectors


# -- TOML ------------------------------------------------------------------------------------------


def toml_string(value: str) -> str:
    """A TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for char in value:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _comment(text: str) -> str:
    return "# " + " ".join(text.split())


def render_toml(suggested: SuggestedMapping) -> str:
    """The mapping as a TOML file: notes first, each guessed line with a ``# guessed: ...`` comment.
    It reads back (:func:`~.mapping.read_mapping`) as the same mapping, named after the file."""
    mapping = suggested.mapping
    data = mapping.model_dump(by_alias=True, exclude_none=True)
    if data.get("id_type") == "string":
        del data["id_type"]
    lines = [
        "# A brain-graph mapping suggested by `brain-graph attach --suggest`"
        + (f" from {suggested.source}" if suggested.source else "")
        + ".",
        "# Lines ending in `# guessed: ...` are guesses: check them. Then: brain-graph attach --check THIS_FILE",
    ]
    lines += [_comment(note) for note in suggested.notes]
    lines.append("")

    def line(key: str, text: str) -> str:
        reasons = suggested.guessed(key)
        return text + (f"  # guessed: {' '.join('; '.join(reasons).split())}" if reasons else "")

    for key in ("id_property", "id_type", "tenant", "project_property", "title_properties", "url_property"):
        if key in data:
            lines.append(line(key, f"{key} = {toml_value(data[key])}"))
    for key in ("secured_property", "acl_property", "acl_user_property", "acl_group_property", "properties"):
        if key in data and data[key] != []:
            lines.append(line(key, f"{key} = {toml_value(data[key])}"))
    for node in data["nodes"]:
        prefix = f"nodes.{node['label']}"
        lines += ["", "[[nodes]]", f"label = {toml_value(node['label'])}"]
        lines.append(line(f"{prefix}.node_type", f"node_type = {toml_value(node['node_type'])}"))
        if node.get("text"):
            lines.append(line(f"{prefix}.text", f"text = {toml_value(node['text'])}"))
        for key in ("id_property", "id_type", *FACET_KEYS):
            if key in node:
                lines.append(line(f"{prefix}.{key}", f"{key} = {toml_value(node[key])}"))
    if data["edges"]:
        lines.append("")
        lines += [_comment(note) for note in suggested.edge_notes]
    for i, edge in enumerate(data["edges"]):
        lines += [*([""] if i else []), "[[edges]]", f"type = {toml_value(edge['type'])}"]
        lines.append(line(f"edges.{edge['type']}.as", f"as = {toml_value(edge['as'])}"))
    if "clusters" in data:
        lines += ["", "[clusters]"]
        for key, value in data["clusters"].items():
            if value != {}:
                lines.append(line(f"clusters.{key}", f"{key} = {toml_value(value)}"))
    for source in data["vectors"]:
        prefix = f"vectors.{source['profile']}"
        lines += ["", "[[vectors]]"]
        for key, value in source.items():
            lines.append(line(f"{prefix}.{key}", f"{key} = {toml_value(value)}"))
    return "\n".join(lines) + "\n"
