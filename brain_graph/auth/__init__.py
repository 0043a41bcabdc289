"""Who is calling: bearer tokens mapped to principals with scopes, verification that deployments can
replace, per-principal rate limits, and the LangGraph server's custom auth built on them.

- :mod:`.credentials`: :class:`Credentials` (a principal plus scopes) and the scope names.
- :mod:`.tokens`: signed JWTs, minted by :class:`TokenIssuer`, checked by :class:`JwtVerifier`.
- :mod:`.settings`: ``BRAIN_GRAPH_AUTH*`` settings and the verifier they choose.
- :mod:`.rate_limit`: :class:`RateLimiter` (the ``limits`` library) and its HTTP headers.
- :mod:`.gate`: :class:`Gate`, one check of an ``Authorization`` header shared by GraphQL and the runs API.
- :mod:`.langgraph_auth`: ``auth``, the object ``langgraph.json`` names.
"""

from brain_graph.auth.credentials import MAINTAINER, READER, SCOPES, Credentials, Scope
from brain_graph.auth.gate import Gate, default_gate
from brain_graph.auth.rate_limit import RateDecision, RateLimiter
from brain_graph.auth.settings import AuthSettings, load_auth_settings
from brain_graph.auth.tokens import JwtVerifier, TokenIssuer, TokenVerifier

__all__ = [
    "MAINTAINER",
    "READER",
    "SCOPES",
    "AuthSettings",
    "Credentials",
    "Gate",
    "JwtVerifier",
    "RateDecision",
    "RateLimiter",
    "Scope",
    "TokenIssuer",
    "TokenVerifier",
    "default_gate",
    "load_auth_settings",
]
