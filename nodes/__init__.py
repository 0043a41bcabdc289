"""The six pipeline steps of brainSearch, one module each (installed as ``brain_graph.nodes``).

Each step is ``step(state, deps) -> update``: it reads the typed state as the earlier steps wrote it,
returns only its own keys (a TypedDict of JSON values), and reaches the stores through ``deps``
(resolved from the LangGraph runtime context).
"""

from __future__ import annotations

from brain_graph.pipeline.binding import Step

from .assemble_passages import assemble_passages
from .build_pack import build_pack
from .embed import embed
from .expand import expand
from .retrieve import retrieve
from .score_episodes import score_episodes

PIPELINE: tuple[tuple[str, Step], ...] = (
    ("embed", embed),
    ("retrieve", retrieve),
    ("expand", expand),
    ("score_episodes", score_episodes),
    ("assemble_passages", assemble_passages),
    ("build_pack", build_pack),
)

__all__ = ["PIPELINE", "assemble_passages", "build_pack", "embed", "expand", "retrieve", "score_episodes"]
