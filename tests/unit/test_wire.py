"""The state's TypedDicts (brain_graph.core.wire) are generated from the pydantic contracts: the committed
brain_graph/core/wire_generated.py is what scripts/generate_wire.py writes, wire exports every one, and
the values a search writes are the contracts' serialised form, field for field."""

from __future__ import annotations

import inspect

from typing_extensions import get_type_hints

from brain_graph.core import wire
from brain_graph.core.contracts import STATE_FORMS, BrainSearchRequest, BrainSearchResult
from brain_graph.core.wire_codegen import WIRE_GENERATED_PATH, render_wire
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.state import BrainSearchOutput
from tests.helpers import request


def test_the_committed_state_forms_are_what_the_generator_writes() -> None:
    assert WIRE_GENERATED_PATH.read_text(encoding="utf-8") == render_wire(), "run scripts/generate_wire.py"


def test_wire_exports_each_state_form_with_the_fields_of_its_model_in_order() -> None:
    for model, form in STATE_FORMS.items():
        shape = getattr(wire, form.name)
        assert inspect.cleandoc(shape.__doc__) == form.doc
        assert list(get_type_hints(shape)) == [field.alias or name for name, field in model.model_fields.items()]


def test_the_graph_output_is_the_state_form_of_the_result() -> None:
    assert BrainSearchOutput is wire.BrainSearchOutput
    assert STATE_FORMS[BrainSearchResult].name == "BrainSearchOutput"
    assert list(get_type_hints(wire.SearchRequest)) == [
        *get_type_hints(wire.SearchRequestFields),
        "profileIds",
        "filtersApplied",
    ]
    assert STATE_FORMS[BrainSearchRequest].name == "SearchRequestFields"


def test_a_search_writes_the_serialised_contracts(small_graph: BrainSearchGraph) -> None:
    """Every field present, nothing else: the output and the validated request are what ``to_wire()``
    makes of their contracts."""
    search = request("token refresh", expandDepth=2)
    updates = {
        step: value for update in small_graph.stream(search, stream_mode="updates") for step, value in update.items()
    }
    written = updates["embed"]["request"]
    fields = {key: value for key, value in written.items() if key not in ("profileIds", "filtersApplied")}
    assert BrainSearchRequest.model_validate(fields).to_wire() == fields
    output = small_graph.invoke(search)
    assert all(output[key] for key in ("hits", "candidates", "graphEdges", "episodes", "passages"))
    assert output["promptPack"]["citations"]
    assert BrainSearchResult.model_validate(output).to_wire() == output
