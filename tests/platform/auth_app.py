"""A LangGraph custom auth for the auth-server tests: fixed bearer tokens, one user each.

alice carries a ``groups`` claim, carol a ``group:security`` permission, bob neither.
"""

from __future__ import annotations

from typing import Any

from langgraph_sdk import Auth

USERS: dict[str, dict[str, Any]] = {
    "alice-token": {"identity": "alice", "groups": ["security"]},
    "bob-token": {"identity": "bob"},
    "carol-token": {"identity": "carol", "permissions": ["group:security"]},
}

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """The user of a known ``Bearer`` token; anything else is refused with 401."""
    scheme, _, token = (authorization or "").partition(" ")
    user = USERS.get(token) if scheme.lower() == "bearer" else None
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown or missing bearer token")
    return user  # type: ignore[return-value]  # extra claims (groups) ride along with the identity
