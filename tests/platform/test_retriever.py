"""BrainSearchRetriever: brain_search as a LangChain retriever, sync, async and inside LCEL."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from langchain_core.documents import Document
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from pydantic import ValidationError

from brain_graph.contracts import BrainSearchOptionsInput
from brain_graph.errors import AuthorizationError
from brain_graph.graph import BrainSearchGraph, build_graph
from brain_graph.retriever import BrainSearchRetriever
from brain_graph.security import Principal
from brain_graph.services import SearchServices
from tests.platform.cases import ALICE, SECURED_POSTMORTEM, in_process

QUERY = "token refresh outage"


def format_docs(documents: list[Document]) -> str:
    """Documents as a cited context block."""
    return "\n\n".join(
        f"[{doc.metadata['citation']}] {doc.metadata['title']} <{doc.metadata['url']}>\n{doc.page_content}"
        for doc in documents
    )


@pytest.fixture
def retriever(home_graph: BrainSearchGraph) -> BrainSearchRetriever:
    options = BrainSearchOptionsInput.model_validate({"topK": 5})
    return BrainSearchRetriever(graph=home_graph, tenant_id="acme", secured=False, options=options)


def test_documents_are_the_passages_in_rank_order(
    retriever: BrainSearchRetriever, home_graph: BrainSearchGraph
) -> None:
    documents = retriever.invoke(QUERY)
    expected = in_process(
        home_graph, {"queryText": QUERY, "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 5}}, None
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
    assert [doc.id for doc in documents] == [candidate["nodeId"] for candidate in expected["candidates"][:5]]
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
    with pytest.raises(ValidationError, match="topK"):
        BrainSearchRetriever(graph=home_graph, tenant_id="acme", options=cast(Any, {"topK": 1000}))
