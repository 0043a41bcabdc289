"""The JSON shapes of the state (brain_graph.core.wire) and the pydantic contracts describe the same wire."""

from __future__ import annotations

import pytest
from pydantic import BaseModel
from typing_extensions import get_type_hints

from brain_graph.core import contracts, wire
from brain_graph.pipeline.state import BrainSearchOutput

PAIRS = [
    (wire.SearchFilter, contracts.BrainSearchFilterInput),
    (wire.SearchOptions, contracts.BrainSearchOptionsInput),
    (wire.SearchHit, contracts.BrainSearchHit),
    (wire.GraphNode, contracts.BrainGraphNode),
    (wire.GraphEdge, contracts.BrainGraphEdge),
    (wire.SearchEpisode, contracts.BrainSearchEpisode),
    (wire.RagPassage, contracts.BrainRagPassage),
    (wire.CandidateSupport, contracts.BrainCandidateSupport),
    (wire.ScoringBreakdown, contracts.BrainScoringBreakdown),
    (wire.CandidateVia, contracts.BrainCandidateVia),
    (wire.SearchCandidate, contracts.BrainSearchCandidate),
    (wire.Citation, contracts.BrainCitation),
    (wire.PromptPack, contracts.BrainPromptPack),
    (BrainSearchOutput, contracts.BrainSearchResult),
]


def aliases(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


@pytest.mark.parametrize(("shape", "model"), PAIRS, ids=[model.__name__ for _, model in PAIRS])
def test_each_shape_has_the_fields_of_its_contract_in_order(shape: type, model: type[BaseModel]) -> None:
    assert list(get_type_hints(shape)) == aliases(model)
