"""The profiles file: node types, embedding profiles and embedders declared in TOML (or YAML).

Read by :func:`read_profiles_file` (``BRAIN_GRAPH_PROFILES``; the shipped default is
``default_profiles.toml`` beside this module, :func:`default_profiles_file`). The file is validated by
pydantic and then for what it refers to (a profile's node types are declared ones, its text fields ones
its types may have, its embedder a declared one or a spec); every problem is one
:class:`ProfilesFileError` line naming the key, e.g. ``profiles."cdm.work.summary".kind: Field required``.
Keys are camelCase, as in the dataset format; the reference is ``docs/node-types.md``.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError

from brain_graph.core.errors import ConfigurationError, shown
from brain_graph.embedding.hosted import KNOWN_DIMENSIONS, ProviderConfig, parse_provider
from brain_graph.embedding.node_types import TITLE, NodeType, PassageField
from brain_graph.embedding.providers import (
    LEXICAL,
    NAMED,
    PROVIDER,
    EmbedderSpec,
    check_embedder_name,
    parse_embedder_spec,
    provider_config,
)

DEFAULT_FILE_NAME = "default_profiles.toml"
FORMAT_VERSION = 1
MAX_CHARS = 1_000_000  # a profile's maxChars, a passage field's maxChars: at most this
NodeTypeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$")]
FieldName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]
Kind = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,39}$")]
ProfileId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")]
Embedder = ProviderConfig | EmbedderSpec


class ProfilesFileError(ConfigurationError):
    """A profiles file that cannot be used: one line naming the file, the key and the problem."""

    def __init__(self, source: str, key: str, problem: str) -> None:
        self.key = key
        super().__init__(f"{source}: {key}: {problem}" if key else f"{source}: {problem}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


def _field_entry(value: Any) -> Any:
    """A passage field given by name alone is ``{field = NAME}``."""
    return {"field": value} if isinstance(value, str) else value


class PassageEntry(_Strict):
    field: FieldName
    max_chars: int | None = Field(default=None, alias="maxChars", ge=1, le=MAX_CHARS)


class NodeTypeEntry(_Strict):
    passage: list[Annotated[PassageEntry, BeforeValidator(_field_entry)]] = Field(
        default_factory=lambda: [PassageEntry(field="summary")], max_length=16
    )
    fields: list[FieldName] | None = Field(default=None, max_length=256)


class ProfileEntry(_Strict):
    kind: Kind
    node_types: list[NodeTypeName] = Field(alias="nodeTypes", min_length=1, max_length=256)
    text_fields: list[FieldName] = Field(alias="textFields", min_length=1, max_length=16)
    default: bool = True
    embedder: str | None = None
    max_chars: int = Field(default=1_000, alias="maxChars", ge=1, le=MAX_CHARS)


class EmbedderEntry(_Strict):
    provider: str = Field(min_length=1)
    dimension: int | None = Field(default=None, ge=1, le=65_536)
    base_url: str | None = Field(default=None, alias="baseUrl", min_length=1)
    api_key_env: str | None = Field(default=None, alias="apiKeyEnv", pattern=r"^([A-Za-z_][A-Za-z0-9_]{0,127})?$")
    batch_size: int = Field(default=64, alias="batchSize", ge=1, le=2_048)
    timeout_seconds: float = Field(default=30.0, alias="timeoutSeconds", gt=0, le=600)
    max_retries: int = Field(default=3, alias="maxRetries", ge=0, le=10)
    retry_wait_seconds: float = Field(default=1.0, alias="retryWaitSeconds", ge=0, le=60)
    request_dimensions: bool = Field(default=False, alias="requestDimensions")
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)


class ProfilesFile(_Strict):
    """A profiles file as read (see the module docstring); declaration order is kept."""

    format_version: Literal[1] = Field(default=1, alias="formatVersion")
    node_types: dict[NodeTypeName, NodeTypeEntry] = Field(default_factory=dict, alias="nodeTypes")
    profiles: dict[ProfileId, ProfileEntry] = Field(min_length=1)
    embedders: dict[str, EmbedderEntry] = Field(default_factory=dict)

    def declared_node_types(self) -> dict[str, NodeType]:
        """The node types, as :class:`~brain_graph.embedding.node_types.NodeType`."""
        return {
            name: NodeType(
                name,
                tuple(PassageField(entry.field, entry.max_chars) for entry in spec.passage),
                tuple(spec.fields) if spec.fields is not None else None,
            )
            for name, spec in self.node_types.items()
        }

    def kinds(self) -> list[str]:
        """The profile kinds, in the order the profiles declare them."""
        return list(dict.fromkeys(profile.kind for profile in self.profiles.values()))

    def default_kinds(self) -> list[str]:
        """The kinds of the default profiles (what a search that names no kind searches), in order."""
        return list(dict.fromkeys(profile.kind for profile in self.profiles.values() if profile.default))

    def embedded_types(self) -> list[str]:
        """The node types some profile embeds, in the order the profiles name them."""
        return list(dict.fromkeys(t for profile in self.profiles.values() for t in profile.node_types))

    def embedder(self, profile_id: str) -> Embedder | None:
        """The embedder a profile names (None: the deployment's default)."""
        named = self.profiles[profile_id].embedder
        return None if named is None else self.resolve(named)

    def resolve(self, value: str) -> Embedder:
        """The embedder a spec or a declared name stands for (the file is checked: it resolves)."""
        spec = parse_embedder_spec(value)
        if spec.kind == NAMED:
            return _embedder_of(self.embedders[spec.source or ""])
        if spec.kind == PROVIDER:
            return provider_config(spec)
        return spec


def _embedder_of(entry: EmbedderEntry) -> Embedder:
    spec = parse_embedder_spec(entry.provider)
    if spec.kind != PROVIDER:
        return spec
    provider, model = parse_provider(spec.source or "")
    dimension = entry.dimension if entry.dimension is not None else provider_config(spec).dimension
    return ProviderConfig(
        provider,
        model,
        dimension,
        base_url=entry.base_url,
        api_key_env=entry.api_key_env,
        batch_size=entry.batch_size,
        timeout_s=entry.timeout_seconds,
        max_retries=entry.max_retries,
        retry_wait_s=entry.retry_wait_seconds,
        request_dimensions=entry.request_dimensions,
        options=tuple(sorted(entry.options.items())),
    )


# --- reading -------------------------------------------------------------------------------------------


def _key(parts: Sequence[int | str]) -> str:
    """A TOML-style key path: ``profiles."cdm.work.summary".textFields[1]``."""
    key = ""
    for part in parts:
        if isinstance(part, int):
            key += f"[{part}]"
            continue
        if part == "[key]":  # pydantic's mark of a table's name (rather than its value)
            key += " (the name)"
            continue
        name = part if part.replace("_", "").replace("-", "").isalnum() else f'"{part[:80]}"'
        key += f".{name}" if key else name
    return key


_TABLES: dict[str, type[BaseModel]] = {"nodeTypes": NodeTypeEntry, "profiles": ProfileEntry, "embedders": EmbedderEntry}


def _allowed_keys(parts: Sequence[int | str]) -> str:
    """The keys allowed where an unknown key is (named in the error)."""
    model: type[BaseModel] = ProfilesFile
    if "passage" in parts[:-1]:
        model = PassageEntry
    elif len(parts) >= 3 and str(parts[0]) in _TABLES:
        model = _TABLES[str(parts[0])]
    return ", ".join(field.alias or name for name, field in model.model_fields.items())


def _validation_problem(source: str, error: ValidationError) -> ProfilesFileError:
    errors = error.errors(include_url=False)
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])  # a misspelt key first
    parts = list(first["loc"])
    if first["type"] == "extra_forbidden":
        return ProfilesFileError(source, _key(parts), f"unknown key; the keys here are {_allowed_keys(parts)}")
    message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())[:300]
    got = "" if first["type"] == "missing" else f" (got {shown(first.get('input'))})"
    return ProfilesFileError(source, _key(parts), message + got)


def _parsed(source: str, text: str, suffix: str) -> Any:
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ProfilesFileError(source, "", f"not valid TOML ({' '.join(str(error).split())})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "a syntax error"
        raise ProfilesFileError(source, "", f"not valid YAML ({problem}{where})") from None


def parse_profiles(text: str, source: str, suffix: str = ".toml") -> ProfilesFile:
    """The profiles file of a TOML (``suffix`` ``.toml``) or YAML text, checked; ``source`` names it in errors."""
    raw = _parsed(source, text, suffix)
    if not isinstance(raw, dict):
        raise ProfilesFileError(
            source, "", f"a profiles file is a table of nodeTypes, profiles and embedders (got {type(raw).__name__})"
        )
    try:
        model = ProfilesFile.model_validate(raw)
    except ValidationError as error:
        raise _validation_problem(source, error) from None
    for key, problem in _reference_problems(model):
        raise ProfilesFileError(source, key, problem)
    return model


def read_profiles_file(path: str | Path) -> ProfilesFile:
    """The profiles file at ``path`` (``.toml``, ``.yaml`` or ``.yml``), checked."""
    source = Path(path)
    suffix = source.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise ProfilesFileError(str(source), "", "a profiles file is TOML (.toml) or YAML (.yaml, .yml)")
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfilesFileError(str(source), "", "no such file") from None
    except UnicodeDecodeError:
        raise ProfilesFileError(str(source), "", "not UTF-8; save it as UTF-8") from None
    except OSError as error:
        raise ProfilesFileError(str(source), "", f"not readable ({error.strerror or error})") from None
    return parse_profiles(text, str(source), suffix)


def default_profiles_path() -> Path:
    """The shipped profiles file (the profiles used without ``BRAIN_GRAPH_PROFILES``)."""
    return Path(str(resources.files("brain_graph.embedding").joinpath(DEFAULT_FILE_NAME)))


@lru_cache(maxsize=1)
def default_profiles_file() -> ProfilesFile:
    """The shipped profiles file, read once."""
    return read_profiles_file(default_profiles_path())


# --- what the file refers to ---------------------------------------------------------------------------


def _close(value: str, choices: Sequence[str]) -> str:
    match = difflib.get_close_matches(value, list(choices), n=1)
    return f"; did you mean {match[0]!r}?" if match else ""


def _reference_problems(model: ProfilesFile) -> Iterator[tuple[str, str]]:
    """Each reference of the file that does not resolve, as (key, problem)."""
    yield from _node_type_problems(model)
    yield from _embedder_problems(model)
    yield from _profile_problems(model)


def _node_type_problems(model: ProfilesFile) -> Iterator[tuple[str, str]]:
    for name, spec in model.node_types.items():
        for index, entry in enumerate(spec.passage):
            key = _key(["nodeTypes", name, "passage", index, "field"])
            if entry.field == TITLE:
                yield key, "the title always starts a passage: list the text fields after it"
            elif spec.fields is not None and entry.field not in spec.fields:
                close = _close(entry.field, spec.fields)
                yield key, f"{entry.field!r} is not one of the type's fields {spec.fields}{close}"
        if len({entry.field for entry in spec.passage}) != len(spec.passage):
            yield _key(["nodeTypes", name, "passage"]), "a field is listed twice"


def _embedder_problems(model: ProfilesFile) -> Iterator[tuple[str, str]]:
    for name, entry in model.embedders.items():
        try:
            check_embedder_name(name)
        except ValueError as error:
            yield _key(["embedders", name]), str(error)
            continue
        try:
            spec = parse_embedder_spec(entry.provider)
        except ValueError as error:
            yield _key(["embedders", name, "provider"]), str(error)
            continue
        if spec.kind == NAMED:
            yield (
                _key(["embedders", name, "provider"]),
                f"unknown embedder {entry.provider!r}; a provider is PROVIDER:MODEL, lexical, lexical:DIM or st:SOURCE",
            )
        elif spec.kind == PROVIDER and entry.dimension is None and spec.source not in KNOWN_DIMENSIONS:
            yield _key(["embedders", name, "dimension"]), f"required: the dimension of {spec.source}'s vectors"
        elif spec.kind == LEXICAL and entry.dimension not in (None, spec.dimension):
            yield _key(["embedders", name, "dimension"]), f"{entry.provider} has dimension {spec.dimension}"


def _profile_problems(model: ProfilesFile) -> Iterator[tuple[str, str]]:
    declared = list(model.node_types)
    for profile_id, profile in model.profiles.items():
        for index, node_type in enumerate(profile.node_types):
            if node_type not in model.node_types:
                yield (
                    _key(["profiles", profile_id, "nodeTypes", index]),
                    f"{node_type!r} is not a declared node type (declare it under nodeTypes); declared: "
                    f"{shown(declared, 300)}{_close(node_type, declared)}",
                )
        if len(set(profile.text_fields)) != len(profile.text_fields):
            yield _key(["profiles", profile_id, "textFields"]), "a field is listed twice"
        allowed = _fields_of(model, profile.node_types)
        for index, field_name in enumerate(profile.text_fields):
            if allowed is not None and field_name != TITLE and field_name not in allowed:
                yield (
                    _key(["profiles", profile_id, "textFields", index]),
                    f"{field_name!r} is a field of none of its node types (their fields: {sorted(allowed)})"
                    f"{_close(field_name, sorted(allowed))}",
                )
        if profile.embedder is not None:
            problem = _embedder_problem(model, profile.embedder)
            if problem is not None:
                yield _key(["profiles", profile_id, "embedder"]), problem


def _fields_of(model: ProfilesFile, node_types: Sequence[str]) -> set[str] | None:
    """The text fields the node types declare together (None when one of them declares none)."""
    fields: set[str] = set()
    for node_type in node_types:
        spec = model.node_types.get(node_type)
        if spec is None or spec.fields is None:
            return None
        fields.update(spec.fields)
    return fields


def _embedder_problem(model: ProfilesFile, value: str) -> str | None:
    """Why a profile's ``embedder`` does not resolve, or None."""
    try:
        spec = parse_embedder_spec(value)
    except ValueError as error:
        return str(error)
    if spec.kind == NAMED and spec.source not in model.embedders:
        names = list(model.embedders)
        return (
            f"unknown embedder {value!r}: declare it under [embedders.{value}] (declared: {names or 'none'})"
            f"{_close(value, names)}"
        )
    if spec.kind == PROVIDER:
        try:
            provider_config(spec)
        except ConfigurationError:
            return f"the dimension of {value!r} is not known: declare it under [embedders.NAME] with a dimension"
    return None
