"""The ``brain_index`` LangGraph graph in process: plan → index → report, with progress events."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from brain_graph.core.errors import AuthorizationError, InvalidRequestError
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.profiles import default_profiles
from brain_graph.graphs.index import build_index_graph
from brain_graph.pipeline.services import SearchServices
from tests.helpers import SMALL_GRAPH, make_store, vector_states


def test_the_index_graph_reports_like_the_cli_and_streams_progress(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    graph = build_index_graph(services)
    first = graph.invoke({"full": True})["report"]
    assert first["embedded"] > 0
    assert "t1" in first["tenants"]
    events = list(graph.stream({"tenants": ["t1"]}, stream_mode=["updates", "custom"]))
    steps = [next(iter(chunk)) for mode, chunk in events if mode == "updates"]
    assert steps == ["plan", "index", "report"]
    progress = [chunk for mode, chunk in events if mode == "custom"]
    assert progress
    assert progress[-1]["done"] == progress[-1]["total"]
    report = next(chunk for mode, chunk in events if mode == "updates" and "report" in chunk)["report"]["report"]
    assert (report["embedded"], report["tenants"]) == (0, ["t1"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [({"full": "yes"}, "full"), ({"tenants": []}, "tenants"), ({"profiles": "cdm.doc.body"}, "profiles")],
)
def test_bad_input_names_the_field(tmp_path: Path, payload: dict[str, object], field: str) -> None:
    graph = build_index_graph(make_store(tmp_path, SMALL_GRAPH))
    with pytest.raises(InvalidRequestError, match=field):
        graph.invoke(payload)


def test_services_from_a_json_context_are_refused(tmp_path: Path) -> None:
    graph = build_index_graph(make_store(tmp_path, SMALL_GRAPH))
    with pytest.raises(InvalidRequestError, match=r"context\.services"):
        graph.invoke({}, context={"services": {"backend": "x"}})


def _rebuild_services(tmp_path: Path) -> SearchServices:
    """Services over a loaded store whose profiles now name another embedder (a rebuild is planned)."""
    loaded = make_store(tmp_path, SMALL_GRAPH)
    profiles = default_profiles({"default": LexicalHashEmbeddings(64)})
    return SearchServices(backend=loaded.backend, profiles=profiles)


def _server_config(user: Any) -> RunnableConfig:
    """A run as a LangGraph server starts it for ``user`` (another deployment's auth handler)."""
    return {"configurable": {"langgraph_auth_user": user}}


class MappingUser(dict[str, Any]):
    """A server user whose claims are entries of its mapping form (``identity`` is an attribute, as
    LangGraph requires to hand it to the run)."""

    def __init__(self, **claims: Any) -> None:
        super().__init__(claims)
        self.identity = claims["identity"]


@pytest.mark.parametrize(
    "user",
    [
        MappingUser(identity="ops", is_authenticated=True, permissions=["brain:maintainer"]),
        SimpleNamespace(identity="ops", is_authenticated=True, permissions=["brain:maintainer"]),
    ],
    ids=["mapping", "attributes"],
)
def test_a_user_with_the_maintainer_permission_may_rebuild_a_profile(tmp_path: Path, user: Any) -> None:
    graph = build_index_graph(_rebuild_services(tmp_path))
    report = graph.invoke({"full": True}, _server_config(user))["report"]
    assert report["embedded"] > 0


@pytest.mark.parametrize(
    "user",
    [
        MappingUser(identity="ops", is_authenticated=True, permissions=["brain:reader"]),
        MappingUser(identity="ops", is_authenticated=True),
        SimpleNamespace(identity="ops", is_authenticated=True, permissions=None),
    ],
    ids=["reader", "no-permissions", "none"],
)
def test_a_rebuild_without_the_maintainer_permission_is_refused(tmp_path: Path, user: Any) -> None:
    services = _rebuild_services(tmp_path)
    before = vector_states(services)
    with pytest.raises(AuthorizationError, match="brain:maintainer"):
        build_index_graph(services).invoke({"full": True}, _server_config(user))
    assert vector_states(services) == before


def test_the_index_graph_has_json_schemas_for_its_input_and_output() -> None:
    """Studio's input form and the server's ``/assistants/{id}/schemas`` come from these schemas."""
    graph = build_index_graph()
    schema = graph.get_input_jsonschema()
    assert schema["properties"]["full"]["type"] == "boolean"
    assert schema["properties"]["tenants"] == {"items": {"type": "string"}, "title": "Tenants", "type": "array"}
    assert set(schema["properties"]) == {"tenants", "profiles", "full"}
    assert "required" not in schema  # every key is optional
    assert set(graph.get_output_jsonschema()["properties"]) == {"report"}
