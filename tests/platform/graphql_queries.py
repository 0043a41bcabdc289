"""GraphQL documents of the server tests: the seed's brainSearch query selecting every field."""

from __future__ import annotations

from typing import Any

VIA = "via { seedNodeId viaNodeId edgeType direction hops }"
RESULT_FIELDS = f"""
  hits {{ nodeId nodeType profileId profileKind score title url vectorScore lexicalScore }}
  episodes {{ clusterNodeId clusterKind projectKey score size memberNodeIds }}
  graphNodes {{ nodeId nodeType label properties }}
  graphEdges {{ edgeType fromNodeId toNodeId properties }}
  passages {{ sourceNodeId sourceKind text url }}
  promptPack {{ contextMarkdown citations }}
  candidates {{
    nodeId nodeType title url profileId vectorScore adjustedScore reachedBy hops {VIA}
    scoringBreakdown {{
      vector lexical graph marginFloor linkWeight
      support {{ seedNodeId seedScore hops viaNodeId edgeType direction pathWeight contribution }}
      ceiling
    }}
  }}
  filtersApplied {{ projectKey profileKinds nodeTypes namespaces tags updatedAfter maxAgeDays asOf }}
  warnings {{ code message }}
  graphContextIncluded
"""
BRAIN_SEARCH = f"""
query BrainSearch($queryText: String!, $filter: BrainSearchFilterInput!, $options: BrainSearchOptionsInput) {{
  brainSearch(queryText: $queryText, filter: $filter, options: $options) {{ {RESULT_FIELDS} }}
}}
"""


def variables(request: dict[str, Any]) -> dict[str, Any]:
    """The GraphQL variables of a graph input ``{queryText, filter, options}``."""
    return {"queryText": request["queryText"], "filter": request["filter"], "options": request.get("options")}
