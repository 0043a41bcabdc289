"""Embedding profiles: which nodes are embedded from which text, by which embedder, into which index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import ConfigurationError, InvalidRequestError, shown
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.node_types import DEFAULT_NODE_TYPES, NodeType, PassageField, longest_bound, passage_fields
from brain_graph.embedding.profiles_file import ProfilesFile, default_profiles_file
from brain_graph.stores.base import NodeRecord, ProfileIndexInfo


@dataclass(frozen=True)
class EmbeddingProfile:
    """One vector index: nodes of ``node_types`` embedded from ``text_fields`` by ``embedder_id``.

    The embedded text is cut to ``max_chars`` (embedding models have input limits, and a long body
    would otherwise drown its title).

    ``profile_kind`` is what callers filter on (``profileKindIn``); ``dimension`` is checked against
    the embedder's output and against the vectors the index already holds.
    """

    profile_id: str
    profile_kind: str
    embedder_id: str
    dimension: int
    node_types: tuple[str, ...]
    text_fields: tuple[str, ...]
    default: bool = True
    max_chars: int = 1_000


DEFAULT_LEXICAL_WEIGHT = 0.25  # hybrid retrieval's BM25 weight next to an embedder that names none
MAX_LEXICAL_WEIGHT = 10.0  # an embedder's lexical_weight outside 0..10 (or not a number) is ignored


def hybrid_weight(embedders: Sequence[Embeddings]) -> float:
    """The weight hybrid retrieval gives BM25 next to these embedders when none is configured: the
    largest ``lexical_weight`` an embedder carries (the bundled lexical embedder's), else
    :data:`DEFAULT_LEXICAL_WEIGHT` (chosen for semantic embedders; ``docs/ranking.md``)."""
    weights = [getattr(embedder, "lexical_weight", None) for embedder in embedders]
    chosen = [
        float(weight)
        for weight in weights
        if isinstance(weight, int | float) and not isinstance(weight, bool) and 0.0 <= weight <= MAX_LEXICAL_WEIGHT
    ]
    return max(chosen, default=DEFAULT_LEXICAL_WEIGHT)


def profile_text(node: NodeRecord, profile: EmbeddingProfile) -> tuple[str, bool]:
    """The text a profile embeds for a node: its ``text_fields`` (``title`` from the node, the others
    from its text), stripped and joined by new lines, cut to the profile's ``max_chars``; and whether
    it was cut."""
    parts = []
    for name in profile.text_fields:
        value = node.title if name == "title" else node.text.get(name)
        if value:
            parts.append(value.strip())
    text = "\n".join(parts)
    return text[: profile.max_chars], len(text) > profile.max_chars


@dataclass(frozen=True)
class ProfileRegistry:
    """The embedding profiles of a deployment, the embedders they use and the declared node types
    (what passages of each show; :mod:`brain_graph.embedding.node_types`)."""

    profiles: tuple[EmbeddingProfile, ...]
    embedders: Mapping[str, Embeddings]
    node_types: Mapping[str, NodeType] = field(default_factory=lambda: dict(DEFAULT_NODE_TYPES))

    def __post_init__(self) -> None:
        ids = [p.profile_id for p in self.profiles]
        if len(ids) != len(set(ids)):
            raise ConfigurationError("embedding profile ids must be unique")
        for profile in self.profiles:
            if profile.embedder_id not in self.embedders:
                raise ConfigurationError(f"profile {profile.profile_id} uses unknown embedder {profile.embedder_id!r}")
        object.__setattr__(self, "profiles", tuple(sorted(self.profiles, key=lambda p: p.profile_id)))

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every profile kind, sorted."""
        return tuple(sorted({p.profile_kind for p in self.profiles}))

    def get(self, profile_id: str) -> EmbeddingProfile:
        """The profile with this id."""
        for profile in self.profiles:
            if profile.profile_id == profile_id:
                return profile
        known = [p.profile_id for p in self.profiles]
        raise ConfigurationError(f"unknown embedding profile {profile_id!r}; the profiles are {known}")

    def embedder_name(self, profile: EmbeddingProfile) -> str:
        """The recorded name of a profile's embedder (``name`` or ``model`` attribute, else its class)."""
        embedder = self.embedders[profile.embedder_id]
        for attribute in ("name", "model", "model_name"):
            value = getattr(embedder, attribute, None)
            if isinstance(value, str) and value:
                return PurePath(value).name if PurePath(value).is_absolute() else value  # never a path
        return type(embedder).__name__

    def identity(self, profile: EmbeddingProfile) -> ProfileIndexInfo:
        """What the index records for a profile: its embedder's name and the dimension."""
        return ProfileIndexInfo(profile.profile_id, self.embedder_name(profile), profile.dimension)

    def passage_fields(self, node_type: str) -> tuple[PassageField, ...]:
        """The text fields a passage of a node of this type shows after its title, in order."""
        return passage_fields(self.node_types, node_type)

    @property
    def longest_passage_bound(self) -> int:
        """The largest excerpt bound the node types set themselves (0: none sets one)."""
        return longest_bound(self.node_types)

    @property
    def embedded_types(self) -> tuple[str, ...]:
        """Every node type a profile embeds, sorted."""
        return tuple(sorted({node_type for p in self.profiles for node_type in p.node_types}))

    def covering(self, node_type: str) -> tuple[EmbeddingProfile, ...]:
        """The profiles that embed nodes of ``node_type``."""
        return tuple(p for p in self.profiles if node_type in p.node_types)

    def select(self, kinds: Sequence[str] | None) -> tuple[EmbeddingProfile, ...]:
        """Profiles to search: those of ``kinds``, or the default ones when ``kinds`` is None."""
        if kinds is None:
            return tuple(p for p in self.profiles if p.default)
        if not kinds:
            raise InvalidRequestError("filter.profileKindIn", f"must not be empty; allowed: {list(self.kinds)}")
        unknown = sorted(set(kinds) - set(self.kinds))
        if unknown:
            raise InvalidRequestError(
                "filter.profileKindIn", f"unknown profile kind(s) {shown(unknown)}; allowed: {list(self.kinds)}"
            )
        return tuple(p for p in self.profiles if p.profile_kind in set(kinds))


def _base_profiles(file: ProfilesFile) -> tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], bool], ...]:
    return tuple(
        (profile_id, p.kind, tuple(p.node_types), tuple(p.text_fields), p.default)
        for profile_id, p in file.profiles.items()
    )


# The shipped profiles (id, kind, node types, text fields, default), as default_profiles.toml declares them.
BASE_PROFILES = _base_profiles(default_profiles_file())
PROFILE_IDS = tuple(profile_id for profile_id, *_ in BASE_PROFILES)


def _dimension(embedder: Embeddings) -> int:
    """An embedder's output dimension: its ``dimension`` attribute, else measured on a probe text."""
    dimension = getattr(embedder, "dimension", None)
    return dimension if isinstance(dimension, int) else len(embedder.embed_query("dimension probe"))


def profiles_from_file(
    file: ProfilesFile, embedders: Mapping[str, Embeddings] | None = None, assignments: Mapping[str, str] | None = None
) -> ProfileRegistry:
    """The registry a profiles file declares, with its node types.

    Each profile uses ``embedders[assignments[profile_id]]`` when assigned, else ``embedders["default"]``,
    else the bundled deterministic embedder (:class:`~brain_graph.embedding.lexical.LexicalHashEmbeddings`);
    a profile's own ``embedder`` in the file is resolved by the caller into ``assignments``
    (:func:`brain_graph.pipeline.config.profiles_from_settings`).
    """
    chosen = dict(embedders or {})
    chosen.setdefault("default", LexicalHashEmbeddings())
    assigned = dict(assignments or {})
    unknown = sorted(set(assigned) - set(file.profiles))
    if unknown:
        raise ConfigurationError(
            f"unknown embedding profile(s) {shown(unknown)}; the profiles are {list(file.profiles)}"
        )
    missing = sorted(set(assigned.values()) - set(chosen))
    if missing:
        raise ConfigurationError(f"profile(s) assigned to unknown embedder(s) {shown(missing)}")
    used = sorted({assigned.get(profile_id, "default") for profile_id in file.profiles})
    dimensions = {key: _dimension(chosen[key]) for key in used}
    profiles = tuple(
        EmbeddingProfile(
            profile_id,
            entry.kind,
            assigned.get(profile_id, "default"),
            dimensions[assigned.get(profile_id, "default")],
            tuple(entry.node_types),
            tuple(entry.text_fields),
            default=entry.default,
            max_chars=entry.max_chars,
        )
        for profile_id, entry in file.profiles.items()
    )
    return ProfileRegistry(
        profiles=profiles, embedders={key: chosen[key] for key in used}, node_types=file.declared_node_types()
    )


def default_profiles(
    embedders: Mapping[str, Embeddings] | None = None, assignments: Mapping[str, str] | None = None
) -> ProfileRegistry:
    """The shipped profiles (``cdm.work.summary``, ``cdm.doc.body``, ``code.file.summary``: the file
    ``default_profiles.toml``), with the embedders of :func:`profiles_from_file`."""
    return profiles_from_file(default_profiles_file(), embedders, assignments)
