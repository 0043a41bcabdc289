"""What the command line says about its flags: the request field each ``search`` flag sets, errors
renamed to the flag the user typed, and the flags that may not be given together.

Cheap to import (no pydantic, no LangGraph): the CLI's ``--help`` and ``--version`` load it.
"""

from __future__ import annotations

from collections.abc import Mapping

from brain_graph.core.errors import InvalidRequestError

SEARCH_FLAGS: Mapping[str, str] = {
    "queryText": "QUERY",
    "filter.tenantId": "--tenant",
    "filter.projectKey": "--project",
    "filter.profileKindIn": "--kind",
    "filter.secured": "--public",
    "filter.nodeTypes": "--node-type",
    "filter.namespaces": "--namespace",
    "filter.tags": "--tag",
    "filter.updatedAfter": "--updated-after",
    "filter.maxAgeDays": "--max-age-days",
    "filter.asOf": "--as-of",
    "options.topK": "--top-k",
    "options.expandDepth": "--depth",
    "options.maxNodes": "--max-nodes",
    "options.maxEpisodes": "--max-episodes",
    "options.retrievalMode": "--mode",
    "options.minScore": "--min-score",
    "context.principal.principalId": "--principal",
    "context.principal.groups": "--group",
    "context.principal": "--principal",
}
"""Each field of the request (and runtime context) ``search`` builds, and the flag that sets it."""


def flag_of(field: str, flags: Mapping[str, str]) -> str | None:
    """The flag that set ``field`` or a part of it (``options.topK`` and ``context.principal.groups[0]``
    name ``--top-k`` and ``--group``); ``None`` for a field no flag sets."""
    for name, flag in flags.items():
        if field == name or field.startswith((name + ".", name + "[")):
            return flag
    return None


def on_the_command_line(error: InvalidRequestError, flags: Mapping[str, str] = SEARCH_FLAGS) -> InvalidRequestError:
    """The error naming the flag that set its field instead of the field; unchanged if no flag did."""
    flag = flag_of(error.field, flags)
    return error if flag is None else InvalidRequestError(flag, error.problem)


def conflict(
    given: Mapping[str, bool],
    pairs: tuple[tuple[str, str, str], ...],
    needs: tuple[tuple[str, str, str], ...] = (),
) -> str | None:
    """The one-line refusal of the first pair of ``pairs`` (flag, flag, why) whose flags are both
    ``given``, else of the first of ``needs`` (flag, the flag it needs, why) given without the flag it
    needs; ``None`` when the flags agree."""
    for first, second, why in pairs:
        if given.get(first) and given.get(second):
            return f"{first} and {second} cannot be given together: {why}"
    for flag, needed, why in needs:
        if given.get(flag) and not given.get(needed):
            return f"{flag} needs {needed}: {why}"
    return None
