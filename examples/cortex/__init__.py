"""An agent "cortex" that uses brain-graph as its retrieval step (see README.md).

``extract_query → detect_intent → should_retrieve? → retrieve → generate``, where ``retrieve`` is the
``brain_search`` graph, wired either as a subgraph node over shared state keys (``pattern="shared"``)
or called from inside a node that maps state in and out (``pattern="mapped"``).
"""

from examples.cortex.graph import Pattern, build_cortex, make_graph
from examples.cortex.nodes import detect_intent, extract_query, render_answer, should_retrieve
from examples.cortex.state import CortexContext, CortexState, Intent

__all__ = [
    "CortexContext",
    "CortexState",
    "Intent",
    "Pattern",
    "build_cortex",
    "detect_intent",
    "extract_query",
    "make_graph",
    "render_answer",
    "should_retrieve",
]
