"""Resolving a request's filter: the profiles it searches, its values normalised, its recency cutoff.

``nodeTypes`` chooses the profiles: those embedding one of the types (among ``profileKindIn``'s when
given, else among all profiles), so ``nodeTypes: ["code.file"]`` searches code without naming its
kind. ``maxAgeDays`` counts back from ``asOf``, else from the deployment's clock
(``BRAIN_GRAPH_CLOCK``); without either it is refused, so a result never silently depends on when it
ran. The resolved filter (``filtersApplied``) is what retrieval applies and what the result echoes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from brain_graph.core.contracts import BrainSearchFilterInput
from brain_graph.core.errors import InvalidRequestError, shown
from brain_graph.core.filters import MICROS_PER_DAY, SeedFilter, folded_set, format_timestamp, parse_timestamp
from brain_graph.core.wire import FiltersApplied
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry

UNTIMED_WARNING = "recency_untimed"
UNTIMED_MESSAGE = "recency filter skipped results lacking timestamps"

Clock = Callable[[], int]  # microseconds since the Unix epoch, UTC
SYSTEM_CLOCK = "system"


def system_clock() -> int:
    """The machine's time, in microseconds since the Unix epoch."""
    return time.time_ns() // 1_000


def deployment_clock(setting: str) -> Clock | None:
    """The clock ``BRAIN_GRAPH_CLOCK`` names: ``system`` (the machine's time, echoed in each result's
    ``filtersApplied.asOf``), an ISO-8601 time (a fixed request time, for reproducible deployments and
    tests), or none for ``""``. Raises :class:`ValueError` for anything else."""
    if not setting:
        return None
    if setting == SYSTEM_CLOCK:
        return system_clock
    try:
        fixed = parse_timestamp(setting)
    except ValueError:
        raise ValueError(f"must be {SYSTEM_CLOCK!r} or an ISO-8601 time") from None
    return lambda: fixed


def searched_profiles(search_filter: BrainSearchFilterInput, registry: ProfileRegistry) -> tuple[EmbeddingProfile, ...]:
    """The profiles a request searches: ``profileKindIn``'s (the default kinds when absent), or with
    ``nodeTypes`` those embedding one of the types (among every profile when no kind is named). Raises
    :class:`InvalidRequestError` naming ``filter.nodeTypes`` for a type none of them embeds."""
    node_types = search_filter.node_types
    if node_types is None:
        return registry.select(search_filter.profile_kind_in)
    pool = (
        registry.profiles if search_filter.profile_kind_in is None else registry.select(search_filter.profile_kind_in)
    )
    embedded = sorted({node_type for profile in pool for node_type in profile.node_types})
    unknown = sorted(set(node_types) - set(embedded))
    if unknown:
        raise InvalidRequestError(
            "filter.nodeTypes",
            f"no searched profile embeds {shown(unknown)}; the searchable node types are {shown(embedded, 400)}",
        )
    wanted = set(node_types)
    return tuple(profile for profile in pool if wanted & set(profile.node_types))


def resolve_filters(
    search_filter: BrainSearchFilterInput, profiles: tuple[EmbeddingProfile, ...], clock: Clock | None
) -> FiltersApplied:
    """The filter retrieval applies, resolved (see the module docstring)."""
    cutoffs = []
    if search_filter.updated_after is not None:
        cutoffs.append(parse_timestamp(search_filter.updated_after))
    as_of = None
    if search_filter.max_age_days is not None:
        if search_filter.as_of is not None:
            as_of = parse_timestamp(search_filter.as_of)
        elif clock is not None:
            as_of = clock()
        else:
            raise InvalidRequestError(
                "filter.maxAgeDays",
                "needs filter.asOf, the request time it counts back from (or a deployment clock: BRAIN_GRAPH_CLOCK)",
            )
        cutoffs.append(as_of - search_filter.max_age_days * MICROS_PER_DAY)
    for name, values in (("namespaces", search_filter.namespaces), ("tags", search_filter.tags)):
        if values is not None and not folded_set(values):
            raise InvalidRequestError(f"filter.{name}", "must hold a value that is not blank once case-folded")
    node_types = search_filter.node_types
    return {
        "projectKey": search_filter.project_key,
        "profileKinds": sorted({profile.profile_kind for profile in profiles}),
        "nodeTypes": sorted(set(node_types)) if node_types is not None else None,
        "namespaces": list(folded_set(search_filter.namespaces)) if search_filter.namespaces is not None else None,
        "tags": list(folded_set(search_filter.tags)) if search_filter.tags is not None else None,
        "updatedAfter": format_timestamp(max(cutoffs)) if cutoffs else None,
        "maxAgeDays": search_filter.max_age_days,
        "asOf": format_timestamp(as_of) if as_of is not None else None,
    }


def seed_filter(applied: FiltersApplied) -> SeedFilter:
    """The store filter of a resolved filter."""
    cutoff = applied["updatedAfter"]
    return SeedFilter(
        project_key=applied["projectKey"],
        node_types=tuple(applied["nodeTypes"] or ()),
        namespaces=tuple(applied["namespaces"] or ()),
        tags=tuple(applied["tags"] or ()),
        updated_after=parse_timestamp(cutoff) if cutoff is not None else None,
    )
