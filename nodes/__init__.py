"""The six pipeline steps of brainSearch, one module each (installed as ``brain_graph.nodes``).

Each step is ``step(state, deps) -> update``: it reads the typed state, writes only its own keys,
and reaches the stores through ``deps`` (resolved from the LangGraph runtime context).
"""

from brain_graph.nodes.assemble_passages import assemble_passages
from brain_graph.nodes.build_pack import build_pack
from brain_graph.nodes.embed import embed
from brain_graph.nodes.expand import expand
from brain_graph.nodes.retrieve import retrieve
from brain_graph.nodes.score_episodes import score_episodes

PIPELINE = (
    ("embed", embed),
    ("retrieve", retrieve),
    ("expand", expand),
    ("score_episodes", score_episodes),
    ("assemble_passages", assemble_passages),
    ("build_pack", build_pack),
)

__all__ = ["PIPELINE", "assemble_passages", "build_pack", "embed", "expand", "retrieve", "score_episodes"]
