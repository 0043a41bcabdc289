"""Names on Weaviate: collections per profile, tenants per (tenant, generation), object ids.

* Collection per profile: :func:`collection_name` (``BrainGraph_<slug>_<8 hex of sha256(profile id)>``,
  injective up to a hash collision, which the schema detects when it reads the profile it records).
* Tenant per (brain-graph tenant, generation): :func:`tenant_name`, a safe, deterministic, injective
  encoding into Weaviate's tenant alphabet ``[A-Za-z0-9_-]{1,64}``; :func:`split_tenant_name` and
  :func:`tenant_id_of` read it back.
* Object per (tenant, profile, node): :func:`object_uuid`, so loading twice upserts the same objects.
"""

from __future__ import annotations

import hashlib
import json
import re

from weaviate.util import generate_uuid5

COLLECTION_PREFIX = "BrainGraph_"
TENANT_BASE_MAX = 40
MAX_GENERATION = 10**19
_TENANT_SAFE = re.compile(r"[A-Za-z0-9-]")
_GENERATION_SUFFIX = re.compile(r"(.+)_g([1-9][0-9]*)")
_ENCODED_BYTES = re.compile(r"(?:_[0-9a-f]{2})+")


def collection_name(profile_id: str) -> str:
    """The collection of a profile: readable slug plus a hash of the exact id (Weaviate class names
    allow only ``[A-Za-z0-9_]``, so the slug alone would not be injective)."""
    slug = re.sub(r"[^a-z0-9]+", "_", profile_id.lower()).strip("_")[:64] or "profile"
    digest = hashlib.sha256(profile_id.encode("utf-8")).hexdigest()[:8]
    return f"{COLLECTION_PREFIX}{slug}_{digest}"


def _direct_tenant_name(tenant_id: str) -> str:
    return "".join(
        char if _TENANT_SAFE.fullmatch(char) else "".join(f"_{byte:02x}" for byte in char.encode("utf-8"))
        for char in tenant_id
    )


def tenant_name(tenant_id: str, generation: int | None = None) -> str:
    """The Weaviate tenant of a tenant id (``generation`` None: the base name shared by all its generations).

    Base name: ASCII letters, digits and ``-`` are kept; every other character (``_`` included) becomes
    ``_`` plus two lowercase hex digits per UTF-8 byte, so the encoding is injective. A base over
    :data:`TENANT_BASE_MAX` characters becomes ``__`` + 38 hex digits of SHA-256 (``__`` never occurs in
    the direct encoding). A generation appends ``_g<decimal>``: the direct encoding has ``_`` only before
    two hex digits and the hash form has no ``g``, so the suffix is unambiguous and the name stays
    within Weaviate's 64 characters (40 + 2 + at most 19 digits)."""
    base = _direct_tenant_name(tenant_id)
    if not 0 < len(base) <= TENANT_BASE_MAX:
        base = "__" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[: TENANT_BASE_MAX - 2]
    if generation is None:
        return base
    if not 0 < generation < MAX_GENERATION:
        raise ValueError(f"generation {generation} is out of range")
    return f"{base}_g{generation}"


def split_tenant_name(name: str) -> tuple[str, int | None]:
    """``(base name, generation)`` of a Weaviate tenant name (generation None when it has no suffix)."""
    match = _GENERATION_SUFFIX.fullmatch(name)
    return (match[1], int(match[2])) if match else (name, None)


def tenant_id_of(base: str) -> str:
    """The tenant id a base name encodes (a hashed base is returned as it is: it cannot be decoded)."""
    if base.startswith("__"):
        return base
    try:
        return _ENCODED_BYTES.sub(lambda m: bytes.fromhex(m[0].replace("_", "")).decode("utf-8"), base)
    except UnicodeDecodeError:
        return base


def legacy_tenant_name(tenant_id: str) -> str:
    """The legacy Weaviate tenant of a tenant id, without a generation (direct encoding up to 64
    characters, else ``__`` + 62 hex digits): removed by the first replace-load and by :meth:`drop_tenants`."""
    name = _direct_tenant_name(tenant_id)
    return name if 0 < len(name) <= 64 else "__" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[:62]


def object_uuid(tenant_id: str, profile_id: str, node_id: str) -> str:
    """Deterministic object id, so reloading upserts instead of duplicating."""
    return str(generate_uuid5(json.dumps([tenant_id, profile_id, node_id], ensure_ascii=False)))
