"""BrainSearchRetriever: brain_search as a LangChain retriever, sync, async and inside LCEL, in process
and over a real ``langgraph dev`` server (RemoteGraph)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, RunnablePassthrough
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError
from langgraph.pregel.remote import RemoteException, RemoteGraph

from brain_graph.core.contracts import BrainSearchOptionsInput
from brain_graph.core.errors import AuthorizationError, InvalidRequestError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import GRAPH_NAME, BrainSearchGraph, build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.retriever import BrainSearchRetriever
from tests.platform.cases import ALICE, NO_PRINCIPAL, SECURED_POSTMORTEM, in_process
from tests.platform.devserver import DevServer

QUERY = "token refresh outage"
TOP_K = 8  # the eighth of its candidates is reached by expansion
SECURED_QUERY = "token refresh postmortem"


def per_call(principal: Principal | dict[str, Any] = ALICE) -> RunnableConfig:
    """A call config carrying a principal."""
    return {"configurable": {"principal": principal}}


def format_docs(documents: list[Document]) -> str:
    """Documents as a cited context block."""
    return "\n\n".join(
        f"[{doc.metadata['citation']}] {doc.metadata['title']} <{doc.metadata['url']}>\n{doc.page_content}"
        for doc in documents
    )


@pytest.fixture
def retriever(home_graph: BrainSearchGraph) -> BrainSearchRetriever:
    options = BrainSearchOptionsInput.model_validate({"topK": TOP_K})
    return BrainSearchRetriever(graph=home_graph, tenant_id="acme", secured=False, options=options)


def test_documents_are_the_passages_in_rank_order(
    retriever: BrainSearchRetriever, home_graph: BrainSearchGraph
) -> None:
    documents = retriever.invoke(QUERY)
    expected = in_process(
        home_graph,
        {"queryText": QUERY, "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": TOP_K}},
        None,
    )
    candidates = {candidate["nodeId"]: candidate for candidate in expected["candidates"]}
    numbers = {c["sourceNodeId"]: n for n, c in enumerate(expected["promptPack"]["citations"], 1)}
    assert [doc.page_content for doc in documents] == [passage["text"] for passage in expected["passages"]]
    assert [doc.id for doc in documents] == [passage["sourceNodeId"] for passage in expected["passages"]]
    for doc, passage in zip(documents, expected["passages"], strict=True):
        candidate = candidates[passage["sourceNodeId"]]
        assert doc.metadata == {
            "sourceNodeId": passage["sourceNodeId"],
            "sourceKind": passage["sourceKind"],
            "url": passage["url"],
            "title": candidate["title"],
            "nodeType": candidate["nodeType"],
            "score": candidate["adjustedScore"],
            "adjustedScore": candidate["adjustedScore"],
            "vectorScore": candidate["vectorScore"],
            "reachedBy": candidate["reachedBy"],
            "via": candidate["via"],
            "citation": numbers[passage["sourceNodeId"]],
        }
    # the documents are the first cited candidates, in the pack's (adjustedScore) order, numbered as cited
    assert [doc.metadata["citation"] for doc in documents] == list(range(1, len(documents) + 1))
    assert [doc.id for doc in documents] == [candidate["nodeId"] for candidate in expected["candidates"][:TOP_K]]
    assert [doc.metadata["score"] for doc in documents] == sorted(
        (doc.metadata["score"] for doc in documents), reverse=True
    )
    # an item reached by expansion is a document too, with the path that reached it
    reached = [doc for doc in documents if doc.metadata["reachedBy"] == "graph"]
    assert reached
    assert all(doc.metadata["via"]["seedNodeId"] in candidates for doc in reached)
    assert retriever.invoke(QUERY) == documents  # deterministic


def test_async_gives_the_same_documents(retriever: BrainSearchRetriever) -> None:
    async def both() -> tuple[list[Document], list[list[Document]]]:
        single = await retriever.ainvoke(QUERY)
        many = await asyncio.gather(*(retriever.ainvoke(QUERY) for _ in range(3)))
        return single, list(many)

    single, many = asyncio.run(both())
    assert single == retriever.invoke(QUERY)
    assert all(documents == single for documents in many)


def test_in_an_lcel_chain(retriever: BrainSearchRetriever) -> None:
    chain = retriever | format_docs
    context = chain.invoke(QUERY)
    assert context.startswith(
        "[1] Fix race condition in token refresh <https://tracker.acme.example/browse/AUTH-101>\n"
    )
    assert context == format_docs(retriever.invoke(QUERY))
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n{context}"), ("human", "{question}")]
    )
    rag = {"context": retriever | format_docs, "question": RunnablePassthrough()} | prompt
    messages = rag.invoke(QUERY).to_messages()
    assert messages[0].text == f"Answer from this context:\n{context}"
    assert messages[1].text == QUERY
    assert chain.batch([QUERY, "duplicate card charges"])[0] == context


def test_secured_retrieval_needs_a_principal(home_graph: BrainSearchGraph) -> None:
    secured = BrainSearchRetriever(graph=home_graph, tenant_id="acme", principal=Principal("alice", ("security",)))
    documents = secured.invoke("token refresh postmortem")
    expected = in_process(
        home_graph, {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}, ALICE
    )
    assert expected["hits"][0]["nodeId"] == SECURED_POSTMORTEM  # the best match is only visible to alice's group
    assert SECURED_POSTMORTEM in [doc.id for doc in documents]
    assert [doc.page_content for doc in documents] == [passage["text"] for passage in expected["passages"]]
    assert [doc.id for doc in documents] == [passage["sourceNodeId"] for passage in expected["passages"]]
    with pytest.raises(AuthorizationError):
        BrainSearchRetriever(graph=home_graph, tenant_id="acme").invoke("token refresh postmortem")


def test_built_from_services_with_project_and_kinds(home_services: SearchServices) -> None:
    retriever = BrainSearchRetriever(
        services=home_services,
        tenant_id="globex",
        profile_kinds=["code"],
        secured=False,
        options=BrainSearchOptionsInput(top_k=3),
    )
    documents = retriever.invoke("token refresh")
    assert documents
    assert {doc.metadata["sourceKind"] for doc in documents} == {"code"}
    scoped = BrainSearchRetriever(services=home_services, tenant_id="acme", project_key="PAY", secured=False)
    expected = in_process(
        build_graph(home_services),
        {"queryText": "duplicate card charges", "filter": {"tenantId": "acme", "projectKey": "PAY", "secured": False}},
        None,
    )
    assert [doc.id for doc in scoped.invoke("duplicate card charges")] == [
        passage["sourceNodeId"] for passage in expected["passages"]
    ]
    assert expected["passages"]


def test_options_are_validated_when_the_retriever_is_made(home_graph: BrainSearchGraph) -> None:
    with pytest.raises(InvalidRequestError, match=r"options\.topK: .*less than or equal to 100") as info:
        BrainSearchRetriever(graph=home_graph, tenant_id="acme", options=cast(Any, {"topK": 1000}))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"secured": "false"}, "secured"),
        ({"secured": 0}, "secured"),
        ({"projectKey": "NOPE"}, "projectKey"),  # misspelt project_key: refused, not ignored
        ({"topK": 1}, "topK"),  # belongs in options
        ({"tenant_id": 5}, "tenant_id"),
    ],
)
def test_arguments_are_not_coerced_or_ignored(
    home_graph: BrainSearchGraph, arguments: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRequestError) as info:
        BrainSearchRetriever(**{"graph": home_graph, "tenant_id": "acme", **arguments})
    assert info.value.field == field


def test_the_principal_can_be_given_per_call(home_graph: BrainSearchGraph) -> None:
    expected = in_process(home_graph, {"queryText": SECURED_QUERY, "filter": {"tenantId": "acme"}}, ALICE)
    expected_ids = [passage["sourceNodeId"] for passage in expected["passages"]]
    anonymous = BrainSearchRetriever(graph=home_graph, tenant_id="acme")
    for principal in (ALICE, Principal("alice", ("security",))):
        documents = anonymous.invoke(SECURED_QUERY, config=per_call(principal))
        assert [doc.id for doc in documents] == expected_ids
        assert SECURED_POSTMORTEM in expected_ids
    assert [doc.id for doc in asyncio.run(anonymous.ainvoke(SECURED_QUERY, config=per_call()))] == expected_ids
    assert [[doc.id for doc in docs] for docs in anonymous.batch([SECURED_QUERY] * 2, config=per_call())] == [
        expected_ids
    ] * 2
    # through an LCEL chain: the chain's config reaches the retriever
    chain = anonymous | format_docs
    assert chain.invoke(SECURED_QUERY, config=per_call()) == format_docs(anonymous.invoke(SECURED_QUERY, per_call()))
    with pytest.raises(AuthorizationError):
        anonymous.invoke(SECURED_QUERY)  # no principal at all: fails closed
    with pytest.raises(InvalidRequestError, match=r"context\.principal\.groups"):
        anonymous.invoke(SECURED_QUERY, config=per_call({"principalId": "alice", "groups": "security"}))


def test_a_per_call_principal_overrides_the_retrievers(home_graph: BrainSearchGraph) -> None:
    outsider = BrainSearchRetriever(graph=home_graph, tenant_id="acme", principal=Principal("mallory"))
    assert SECURED_POSTMORTEM not in [doc.id for doc in outsider.invoke(SECURED_QUERY)]
    assert SECURED_POSTMORTEM in [doc.id for doc in outsider.invoke(SECURED_QUERY, config=per_call())]
    alice = BrainSearchRetriever(graph=home_graph, tenant_id="acme", principal=Principal("alice", ("security",)))
    assert SECURED_POSTMORTEM in [doc.id for doc in alice.invoke(SECURED_QUERY)]
    as_mallory = per_call({"principalId": "mallory", "groups": []})
    assert SECURED_POSTMORTEM not in [doc.id for doc in alice.invoke(SECURED_QUERY, config=as_mallory)]


@pytest.mark.server
def test_a_remote_graph_on_a_langgraph_server(dev_server: DevServer, home_graph: BrainSearchGraph) -> None:
    remote = RemoteGraph(GRAPH_NAME, url=dev_server.url, api_key=None)
    retriever = BrainSearchRetriever(graph=remote, tenant_id="acme")
    local = BrainSearchRetriever(graph=home_graph, tenant_id="acme")
    documents = retriever.invoke(SECURED_QUERY, config=per_call())
    assert SECURED_POSTMORTEM in [doc.id for doc in documents]
    assert documents == local.invoke(SECURED_QUERY, config=per_call())
    assert (
        asyncio.run(retriever.ainvoke(SECURED_QUERY, config=per_call(Principal("alice", ("security",))))) == documents
    )
    with_principal = BrainSearchRetriever(graph=remote, tenant_id="acme", principal=Principal("alice", ("security",)))
    assert with_principal.invoke(SECURED_QUERY) == documents
    # without alice's principal: a secured search fails closed on the server, a public one misses the item
    with pytest.raises(RemoteException) as failed:
        retriever.invoke(SECURED_QUERY)
    assert failed.value.args[0]["error"] == "AuthorizationError"
    assert failed.value.args[0]["message"].startswith(NO_PRINCIPAL)
    public = BrainSearchRetriever(graph=remote, tenant_id="acme", secured=False).invoke(SECURED_QUERY)
    assert public
    assert SECURED_POSTMORTEM not in [doc.id for doc in public]
    outsider = per_call({"principalId": "mallory", "groups": []})
    assert SECURED_POSTMORTEM not in [doc.id for doc in with_principal.invoke(SECURED_QUERY, config=outsider)]


def test_services_need_an_in_process_graph(home_services: SearchServices) -> None:
    with pytest.raises(InvalidRequestError, match="in-process graph"):
        BrainSearchRetriever(
            graph=RemoteGraph(GRAPH_NAME, url="http://127.0.0.1:9"), services=home_services, tenant_id="acme"
        )


def test_the_callers_config_reaches_the_graph_run(home_services: SearchServices) -> None:
    saver = InMemorySaver()
    graph = build_graph(home_services, checkpointer=saver)
    retriever = BrainSearchRetriever(graph=graph, tenant_id="acme")
    on_thread: RunnableConfig = {"configurable": {"thread_id": "chat-1", "principal": ALICE}}
    documents = retriever.invoke(SECURED_QUERY, config=on_thread)
    assert SECURED_POSTMORTEM in [doc.id for doc in documents]
    state = graph.get_state({"configurable": {"thread_id": "chat-1"}})
    assert [p["sourceNodeId"] for p in state.values["passages"]] == [doc.id for doc in documents]
    assert "principal" not in (state.config.get("configurable") or {})  # it travels in the context only
    asyncio.run(retriever.ainvoke(SECURED_QUERY, config={"configurable": {"thread_id": "chat-2", "principal": ALICE}}))
    assert graph.get_state({"configurable": {"thread_id": "chat-2"}}).values["passages"]
    with pytest.raises(GraphRecursionError):  # six steps do not fit a limit of three
        BrainSearchRetriever(graph=build_graph(home_services), tenant_id="acme", secured=False).invoke(
            QUERY, config={"recursion_limit": 3}
        )
