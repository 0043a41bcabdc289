"""Node types as a deployment declares them: the text fields their passages show, in order, each with
its excerpt bound, and optionally the text fields their nodes may have.

A passage always starts with the node's title (a code file's: its path); the fields follow. A node
type nobody declared shows its ``summary`` (:data:`UNDECLARED_PASSAGE`). A field without its own
bound is cut to the :class:`~brain_graph.pipeline.services.SearchLimits` bound of its name (``body``:
``doc_excerpt_chars``, a code file's ``body``: ``code_excerpt_chars``, ``description``:
``description_excerpt_chars``, any other: ``summary_excerpt_chars``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from brain_graph.core.vocabulary import CLUSTER, CODE_FILE, DOC, SIGNAL, WORK_ITEM

TITLE = "title"  # the field every node has outside its text


@dataclass(frozen=True)
class PassageField:
    """A text field a passage shows: its ``name`` and its excerpt bound in characters (None: the
    deployment's bound for the field's name)."""

    name: str
    max_chars: int | None = None


@dataclass(frozen=True)
class NodeType:
    """A declared node type: the ``passage`` fields after the title, in order, and ``fields``, the text
    fields its nodes may have (None: not declared, anything goes)."""

    name: str
    passage: tuple[PassageField, ...]
    fields: tuple[str, ...] | None = None


def _fields(*names: str) -> tuple[PassageField, ...]:
    return tuple(PassageField(name) for name in names)


UNDECLARED_PASSAGE = _fields("summary")
PERSON = "cdm.person"
# The node types of the data contract, as the shipped profiles file declares them (a unit test keeps
# the two equal): what the passages of each showed before node types were configurable.
DEFAULT_NODE_TYPES: Mapping[str, NodeType] = {
    node_type.name: node_type
    for node_type in (
        NodeType(WORK_ITEM, _fields("summary", "description")),
        NodeType(DOC, _fields("body")),
        NodeType(CODE_FILE, _fields("summary", "body")),
        NodeType(SIGNAL, UNDECLARED_PASSAGE),
        NodeType(CLUSTER, UNDECLARED_PASSAGE),
        NodeType(PERSON, UNDECLARED_PASSAGE),
    )
}


def passage_fields(node_types: Mapping[str, NodeType], node_type: str) -> tuple[PassageField, ...]:
    """The passage fields of a node type: its declared ones, else :data:`UNDECLARED_PASSAGE`."""
    declared = node_types.get(node_type)
    return declared.passage if declared is not None else UNDECLARED_PASSAGE


def longest_bound(node_types: Mapping[str, NodeType]) -> int:
    """The largest excerpt bound the declarations set themselves (0 when none does)."""
    return max(
        (field.max_chars for node_type in node_types.values() for field in node_type.passage if field.max_chars),
        default=0,
    )
