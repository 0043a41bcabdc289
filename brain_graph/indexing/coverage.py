"""What a deployment's profiles make of a dataset: per node type, how many nodes each profile embeds,
and what is likely a mistake of the profiles file (or of the data).

:func:`coverage` counts; :meth:`Coverage.warnings` words the problems, one line per kind:

- node types of the data that no profile embeds and the profiles file does not declare (a declared
  type without a profile is reached through the graph on purpose, and is only listed);
- text fields a profile embeds that no node of its types has (``sumary``), and the passage fields of a
  type none of whose passage fields any node has, when its nodes have text at all (a passage showing
  nothing but the title; a type without text shows its title on purpose, and an optional field such as
  a work item's ``description`` may be missing from every node);
- text fields the data has that no profile embeds and no passage shows.

Only node types the data has are judged: a profile of a type absent from this dataset is not a problem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from brain_graph.core.errors import shown
from brain_graph.embedding.node_types import TITLE
from brain_graph.embedding.profiles import ProfileRegistry, profile_text
from brain_graph.stores.base import NodeRecord

MAX_LISTED = 12  # items a warning names before "and N more"


@dataclass
class TypeCoverage:
    """One node type of a dataset: its node count, whether the profiles file declares it, the nodes
    each covering profile embeds (those with text), and how many nodes have each text field."""

    node_type: str
    nodes: int = 0
    declared: bool = False
    embedded: dict[str, int] = field(default_factory=dict)
    fields: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Coverage:
    """The node types of a dataset under a registry, sorted by name, and the problems found."""

    types: tuple[TypeCoverage, ...]
    undeclared: tuple[str, ...]
    missing_fields: tuple[str, ...]
    unused_fields: tuple[str, ...]

    @property
    def uncovered(self) -> tuple[str, ...]:
        """The node types of the data no profile embeds (declared or not)."""
        return tuple(t.node_type for t in self.types if not t.embedded)

    def warnings(self) -> list[str]:
        """The problems, one line per kind (none: an empty list)."""
        lines = []
        if self.undeclared:
            lines.append(
                f"node type(s) no profile embeds, not declared in the profiles file: {_listed(self.undeclared)}; "
                "they are never vector hits: declare them and a profile (BRAIN_GRAPH_PROFILES, docs/node-types.md)"
            )
        if self.missing_fields:
            lines.append(f"text field(s) no node has: {_listed(self.missing_fields)}")
        if self.unused_fields:
            lines.append(f"text field(s) no profile embeds and no passage shows: {_listed(self.unused_fields)}")
        return lines


def _listed(items: tuple[str, ...]) -> str:
    named = ", ".join(shown(item, 120).strip("'\"") for item in items[:MAX_LISTED])
    return named + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def coverage(nodes: Iterable[NodeRecord], registry: ProfileRegistry) -> Coverage:
    """The coverage of ``nodes`` by the registry's profiles and node types (see the module docstring)."""
    types: dict[str, TypeCoverage] = {}
    for node in nodes:
        seen = types.get(node.node_type)
        if seen is None:
            seen = types[node.node_type] = TypeCoverage(node.node_type, declared=node.node_type in registry.node_types)
            seen.embedded = {p.profile_id: 0 for p in registry.covering(node.node_type)}
        seen.nodes += 1
        if node.title:
            seen.fields[TITLE] += 1
        seen.fields.update(name for name, value in node.text.items() if isinstance(value, str) and value.strip())
        for profile_id in seen.embedded:
            if profile_text(node, registry.get(profile_id))[0]:
                seen.embedded[profile_id] += 1
    ordered = tuple(types[name] for name in sorted(types))
    undeclared = tuple(f"{t.node_type} ({t.nodes})" for t in ordered if not t.embedded and not t.declared)
    missing: list[str] = []
    for profile in registry.profiles:
        present = [types[name] for name in profile.node_types if name in types]
        missing.extend(
            f"{'/'.join(t.node_type for t in present)}.{name} (profile {profile.profile_id})"
            for name in profile.text_fields
            if present and not any(t.fields[name] for t in present)
        )
    unused: list[str] = []
    for seen in ordered:
        embedded = {name for profile in registry.covering(seen.node_type) for name in profile.text_fields}
        shown_fields = [f.name for f in registry.passage_fields(seen.node_type)]
        if any(name != TITLE for name in seen.fields) and not any(seen.fields[name] for name in shown_fields):
            missing.extend(f"{seen.node_type}.{name} (passage)" for name in shown_fields)
        unused.extend(
            f"{seen.node_type}.{name} ({count})"
            for name, count in sorted(seen.fields.items())
            if name != TITLE and name not in embedded and name not in shown_fields
        )
    return Coverage(ordered, undeclared, tuple(missing), tuple(unused))
