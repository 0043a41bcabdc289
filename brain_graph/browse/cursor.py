"""The graph API's opaque page cursor: where the previous page ended, for one tenant, node and
direction. It is base64url of a small versioned JSON array; a cursor is checked strictly on the way in
and never widens what a request sees (every read enforces the request's own scope)."""

from __future__ import annotations

import base64
import binascii
import json

from brain_graph.core.errors import InvalidRequestError
from brain_graph.stores.browse import Direction, RelationshipKey

CURSOR_VERSION = 1
MAX_CURSOR_CHARS = 4_000
NOT_OURS = "is not a cursor this server made"


def encode_cursor(tenant_id: str, node_id: str, direction: Direction, after: RelationshipKey) -> str:
    """The cursor resuming after ``after`` on the pages of ``node_id`` in ``direction``."""
    state = [CURSOR_VERSION, tenant_id, node_id, direction, after.edge_type, after.outgoing, after.neighbor_id]
    raw = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, tenant_id: str, node_id: str, direction: Direction) -> RelationshipKey:
    """The resume point of ``cursor``; :class:`InvalidRequestError` (``cursor``) when it is not one
    :func:`encode_cursor` made for this tenant, node and direction."""
    if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_CHARS:
        raise InvalidRequestError("cursor", f"must be 1 to {MAX_CURSOR_CHARS} characters, from a previous page")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidRequestError("cursor", NOT_OURS) from None
    if (
        not isinstance(state, list)
        or len(state) != 7
        or state[0] != CURSOR_VERSION
        or not all(isinstance(state[index], str) for index in (1, 2, 3, 4, 6))
        or not isinstance(state[5], bool)
    ):
        raise InvalidRequestError("cursor", NOT_OURS)
    if (state[1], state[2], state[3]) != (tenant_id, node_id, direction):
        raise InvalidRequestError("cursor", "was made for another tenant, node or direction")
    return RelationshipKey(state[4], state[5], state[6])
