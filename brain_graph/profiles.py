"""Embedding profiles: which nodes are embedded from which text, by which embedder, into which index."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from langchain_core.embeddings import Embeddings

from brain_graph.embeddings import LexicalHashEmbeddings
from brain_graph.errors import ConfigurationError, InvalidRequestError, shown
from brain_graph.vocabulary import CODE_FILE, DOC, WORK_ITEM


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


@dataclass(frozen=True)
class ProfileRegistry:
    """The embedding profiles of a deployment and the embedders they use."""

    profiles: tuple[EmbeddingProfile, ...]
    embedders: Mapping[str, Embeddings]

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
        raise ConfigurationError(f"unknown embedding profile {profile_id!r}")

    def embedder_name(self, profile: EmbeddingProfile) -> str:
        """The recorded name of a profile's embedder (``name`` or ``model`` attribute, else its class)."""
        embedder = self.embedders[profile.embedder_id]
        for attribute in ("name", "model", "model_name"):
            value = getattr(embedder, attribute, None)
            if isinstance(value, str) and value:
                return value
        return type(embedder).__name__

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


def default_profiles(embedders: Mapping[str, Embeddings] | None = None) -> ProfileRegistry:
    """The seed's default profiles (``cdm.work.summary``, ``cdm.doc.body``) plus a code profile.

    All use the bundled deterministic embedder unless ``embedders`` maps ``"default"`` to another one.
    """
    embedder = (embedders or {}).get("default") or LexicalHashEmbeddings()
    dimension = len(embedder.embed_query("dimension probe"))
    profiles: Iterable[EmbeddingProfile] = (
        EmbeddingProfile("cdm.work.summary", "work", "default", dimension, (WORK_ITEM,), ("title", "summary")),
        EmbeddingProfile("cdm.doc.body", "doc", "default", dimension, (DOC,), ("title", "body")),
        EmbeddingProfile(
            "code.file.summary", "code", "default", dimension, (CODE_FILE,), ("title", "summary"), default=False
        ),
    )
    return ProfileRegistry(profiles=tuple(profiles), embedders={"default": embedder})
