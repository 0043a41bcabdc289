"""Bounds on one ``/graphql`` request, checked before any search runs: the body's size, the document's
tokens (graphql-core's ``parse(max_tokens=...)``), its aliases and the fields it selects (fragments
expanded), and one ``brainSearch`` per request, so a request costs one search and one rate-limit slot
and its response stays the size of one search's result.

The limits are generous for real use: the seed's query selecting every field is 0.9 KB, 120 tokens,
64 fields and no alias; GraphiQL's introspection query is 1.7 KB, 183 tokens, 229 fields, no alias.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    parse,
    validate,
)
from graphql.validation import ASTValidationRule, ValidationContext

MAX_BODY_BYTES = 128 * 1024
"""Largest request body read (bytes); a bigger one is refused with HTTP 413 before it is parsed. A
query text is at most 2,000 characters, and the whole schema's selection is under 1 KB."""

MAX_TOKENS = 2_000
"""Largest query document (lexical tokens, graphql-core's ``max_tokens``): parsing stops at the
first token over it, so a huge document costs no more than this to refuse (10x introspection)."""

MAX_ALIASES = 50
"""Most aliased fields in a document: aliases are how one field is repeated under many response keys
(``a1: promptPack { contextMarkdown } a2: ...``); clients of this schema need few or none."""

MAX_FIELDS = 400
"""Most fields a document selects, counting every fragment spread as its fields (so fragments reused
under aliases multiply): this bounds the response to a few hundred field values per result item."""

MAX_SEARCHES_PER_REQUEST = 1
SEARCH_FIELD = "brainSearch"


def parse_query(_context: Any, data: dict[str, Any]) -> DocumentNode:
    """Ariadne's ``query_parser``: graphql-core's parser, aborting past :data:`MAX_TOKENS`."""
    return parse(data["query"], max_tokens=MAX_TOKENS)


class OneSearchPerRequest(ValidationRule):
    """Refuses a document selecting ``brainSearch`` more than once (fragments included: every
    occurrence counts, which bounds the searches executed)."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self._searches = 0

    def enter_field(self, node: FieldNode, *_args: Any) -> None:
        if node.name.value != SEARCH_FIELD:
            return
        self._searches += 1
        if self._searches == MAX_SEARCHES_PER_REQUEST + 1:
            self.report_error(
                GraphQLError(
                    f"a request may select {SEARCH_FIELD} at most {MAX_SEARCHES_PER_REQUEST} time(s); "
                    "send one request per search",
                    node,
                )
            )


class MaxAliases(ValidationRule):
    """Refuses a document with more than :data:`MAX_ALIASES` aliased fields."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self._aliases = 0

    def enter_field(self, node: FieldNode, *_args: Any) -> None:
        if node.alias is None:
            return
        self._aliases += 1
        if self._aliases == MAX_ALIASES + 1:
            self.report_error(
                GraphQLError(f"a request may use at most {MAX_ALIASES} aliases; select each field once", node)
            )


class MaxFields(ValidationRule):
    """Refuses an operation selecting more than :data:`MAX_FIELDS` fields, fragment spreads expanded
    (each fragment is counted once and its count reused, so this is linear in the document)."""

    def __init__(self, context: ValidationContext) -> None:
        super().__init__(context)
        self._fragments: dict[str, int] = {}

    def enter_operation_definition(self, node: OperationDefinitionNode, *_args: Any) -> None:
        fields = self._count(node.selection_set, set())
        if fields > MAX_FIELDS:
            self.report_error(
                GraphQLError(
                    f"a request may select at most {MAX_FIELDS} fields (fragment spreads expanded); "
                    "select fewer fields or fewer aliases",
                    node,
                )
            )

    def _count(self, selections: SelectionSetNode | None, visiting: set[str]) -> int:
        if selections is None:
            return 0
        total = 0
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                total += 1 + self._count(selection.selection_set, visiting)
            elif isinstance(selection, FragmentSpreadNode):
                total += self._fragment(selection.name.value, visiting)
            elif isinstance(selection, InlineFragmentNode):
                total += self._count(selection.selection_set, visiting)
            if total > MAX_FIELDS:  # enough to refuse; also stops exponential fragment nesting early
                return total
        return total

    def _fragment(self, name: str, visiting: set[str]) -> int:
        if name not in self._fragments:
            fragment = self.context.get_fragment(name)
            if fragment is None or name in visiting:  # unknown or cyclic: other rules report it
                return 0
            self._fragments[name] = self._count(fragment.selection_set, visiting | {name})
        return self._fragments[name]


LIMIT_RULES: tuple[type[ASTValidationRule], ...] = (MaxAliases, MaxFields, OneSearchPerRequest)


def validate_query(
    schema: GraphQLSchema,
    document_ast: DocumentNode,
    rules: Collection[type[ASTValidationRule]] | None = None,
    max_errors: int | None = None,
    type_info: Any = None,
) -> list[GraphQLError]:
    """Ariadne's ``query_validator``: :data:`LIMIT_RULES` first (linear in the document), then the
    specification's rules (some superlinear, e.g. overlapping fields) only for a document within them."""
    return validate(schema, document_ast, LIMIT_RULES) or validate(schema, document_ast, rules, max_errors)
