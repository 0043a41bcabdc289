"""Query-document limits: one ``brainSearch`` per request, so a request costs one search and one
rate-limit slot (aliases such as ``a: brainSearch(...) b: brainSearch(...)`` would run several)."""

from __future__ import annotations

from typing import Any

from graphql import FieldNode, GraphQLError, ValidationRule

MAX_SEARCHES_PER_REQUEST = 1
SEARCH_FIELD = "brainSearch"


class OneSearchPerRequest(ValidationRule):
    """Refuses a document selecting ``brainSearch`` more than once (fragments included: every
    occurrence counts, which bounds the searches executed)."""

    def __init__(self, context: Any) -> None:
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
