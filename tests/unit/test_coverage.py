"""What the profiles make of a dataset: counts per node type and profile, and one warning line per kind
of likely mistake (undeclared types no profile embeds, fields no node has, fields nothing uses)."""

from __future__ import annotations

from pathlib import Path

from brain_graph.embedding.profiles import default_profiles, profiles_from_file
from brain_graph.embedding.profiles_file import read_profiles_file
from brain_graph.indexing.coverage import coverage
from brain_graph.indexing.dataset import example_dataset_path, read_graph
from brain_graph.stores.base import NodeRecord

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "node_types"
OWN = profiles_from_file(read_profiles_file(EXAMPLES / "profiles.toml"))


def node(node_id: str, node_type: str, title: str | None = "t", **text: str) -> NodeRecord:
    return NodeRecord("t1", node_id, node_type, None, title, None, text=text)


def test_the_example_under_the_shipped_profiles_has_nothing_to_warn_of() -> None:
    found = coverage(read_graph(example_dataset_path()).node_records(), default_profiles())
    assert found.warnings() == []
    counts = {t.node_type: (t.nodes, t.declared, t.embedded) for t in found.types}
    assert counts["cdm.doc"] == (45, True, {"cdm.doc.body": 44})  # one doc has neither title nor body
    assert counts["cdm.person"] == (12, True, {})
    assert found.uncovered == ("cdm.person", "kg.cluster", "signal.instance")


def test_types_of_ones_own_under_the_shipped_profiles_are_one_line() -> None:
    found = coverage(read_graph(EXAMPLES / "graph.json").node_records(), default_profiles())
    assert found.warnings() == [
        "node type(s) no profile embeds, not declared in the profiles file: concept (2), paper (1), runbook (1), "
        "ticket (2); they are never vector hits: declare them and a profile (BRAIN_GRAPH_PROFILES, docs/node-types.md)",
        "text field(s) no node has: concept.summary (passage), paper.summary (passage), runbook.summary (passage)",
        "text field(s) no profile embeds and no passage shows: concept.aliases (2), concept.definition (2), "
        "paper.abstract (1), runbook.procedure (1), ticket.resolution (2)",
    ]


def test_the_example_profiles_cover_the_example_graph() -> None:
    found = coverage(read_graph(EXAMPLES / "graph.json").node_records(), OWN)
    assert found.warnings() == []
    assert {t.node_type: t.embedded for t in found.types} == {
        "concept": {"concepts": 2},
        "paper": {"papers": 1},
        "runbook": {"operations": 1},
        "ticket": {"operations": 2},
    }


def test_a_misspelt_field_is_missing_where_the_profile_reads_it_and_unused_where_the_data_has_it() -> None:
    nodes = [node("c1", "concept", definiton="typo"), node("c2", "concept", definiton="typo", aliases="a")]
    assert coverage(nodes, OWN).warnings() == [
        "text field(s) no node has: concept.definition (profile concepts), concept.definition (passage)",
        "text field(s) no profile embeds and no passage shows: concept.definiton (2)",
    ]


def test_a_field_of_a_profile_over_several_types_is_missing_only_when_none_of_them_has_it() -> None:
    nodes = [node("r1", "runbook", procedure="p"), node("k1", "ticket", summary="s")]
    assert coverage(nodes, OWN).warnings() == []  # a ticket without a resolution still shows its summary
    assert coverage([node("r1", "runbook", procedure="p")], OWN).warnings() == [
        "text field(s) no node has: runbook.summary (profile operations)"
    ]


def test_a_type_without_text_shows_its_title_without_a_warning_and_long_lists_are_cut() -> None:
    assert coverage([node("p1", "cdm.person")], default_profiles()).warnings() == []
    without_description = [node("w1", "cdm.work_item", summary="s")]
    assert coverage(without_description, default_profiles()).warnings() == []
    notes_only = [node("k1", "ticket", notes="n")]
    assert coverage(notes_only, OWN).warnings() == [
        "text field(s) no node has: ticket.summary (profile operations), ticket.procedure (profile operations), "
        "ticket.summary (passage), ticket.resolution (passage)",
        "text field(s) no profile embeds and no passage shows: ticket.notes (1)",
    ]
    many = [node(f"n{i}", f"type{i:02}") for i in range(15)]
    (line,) = coverage(many, default_profiles()).warnings()
    assert "type11 (1) and 3 more;" in line
