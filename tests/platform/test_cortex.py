"""The example agent cortex with brain_search as its retrieval subgraph, in both patterns."""

from __future__ import annotations

from typing import Any, cast

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from brain_graph.core.errors import AuthorizationError, InvalidRequestError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import NODE_NAMES, BrainSearchGraph, build_graph
from brain_graph.pipeline.services import SearchServices
from examples.cortex import CortexContext, Pattern, build_cortex, detect_intent
from examples.cortex.nodes import IDENTITY_ANSWER, NEEDS_MODEL_ANSWER, NO_RESULTS_ANSWER, classify
from examples.cortex.state import CortexInput
from tests.platform.cases import SECURED_POSTMORTEM, in_process

PATTERNS: tuple[Pattern, ...] = ("shared", "mapped")
QUESTION = "What does the token refresh postmortem say?"
ALICE = Principal("alice", ("security",))
SCOPE = {"tenantId": "acme", "secured": True}
OPTIONS = {"topK": 5}


def _ask(question: str, **scope: Any) -> CortexInput:
    """A cortex input: one question, the secured acme scope unless ``filter``/``options`` are given."""
    return cast(CortexInput, {"messages": [HumanMessage(question)], "filter": SCOPE, "options": OPTIONS, **scope})


def _wire(value: Any) -> Any:
    return value.to_wire() if hasattr(value, "to_wire") else value


class RecordingChatModel(BaseChatModel):
    """A deterministic chat model that answers with a fixed text and records its prompts."""

    answer: str = "model answer [1]"
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.answer))])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_cortex_answers_from_brain_search_with_citations(home_graph: BrainSearchGraph, pattern: Pattern) -> None:
    cortex = build_cortex(home_graph, pattern=pattern)
    state = cortex.invoke(_ask(QUESTION), context=CortexContext(principal=ALICE))
    expected = in_process(
        home_graph,
        {"queryText": QUESTION, "filter": SCOPE, "options": OPTIONS},
        {"principalId": "alice", "groups": ["security"]},
    )
    assert [_wire(hit) for hit in state["hits"]] == expected["hits"]
    assert [_wire(passage) for passage in state["passages"]] == expected["passages"]
    assert _wire(state["promptPack"]) == expected["promptPack"]
    assert state["citations"] == expected["promptPack"]["citations"]
    assert state["citations"][0]["sourceNodeId"] == SECURED_POSTMORTEM
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage)
    assert answer.content == state["answer"]
    assert state["answer"].splitlines()[0] == f'Here is what the knowledge graph holds about "{QUESTION}":'
    assert "- [1] Postmortem: OAuth token refresh outage (cdm.doc)" in state["answer"]
    if pattern == "shared":  # every output key of brain_search lands in the shared state
        assert [_wire(node) for node in state["graphNodes"]] == expected["graphNodes"]
        assert [_wire(episode) for episode in state["episodes"]] == expected["episodes"]
    else:  # the mapping node copies back only what the cortex uses
        assert state["graphNodes"] == []


@pytest.mark.parametrize("pattern", PATTERNS)
def test_both_patterns_give_the_same_answer(home_graph: BrainSearchGraph, pattern: Pattern) -> None:
    context = CortexContext(principal=ALICE)
    shared = build_cortex(home_graph, pattern="shared").invoke(_ask(QUESTION), context=context)
    other = build_cortex(home_graph, pattern=pattern).invoke(_ask(QUESTION), context=context)
    assert other["answer"] == shared["answer"]
    assert other["citations"] == shared["citations"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_stream_with_subgraphs_shows_the_six_inner_steps(home_graph: BrainSearchGraph, pattern: Pattern) -> None:
    cortex = build_cortex(home_graph, pattern=pattern)
    outer: list[str] = []
    inner: list[tuple[str, str]] = []
    for chunk in cortex.stream(
        _ask(QUESTION), context=CortexContext(principal=ALICE), stream_mode="updates", subgraphs=True
    ):
        namespace, update = cast(tuple[tuple[str, ...], dict[str, Any]], chunk)
        (step,) = update
        if namespace:
            inner.append((namespace[0].split(":")[0], step))
        else:
            outer.append(step)
    assert outer == ["extract_query", "detect_intent", "retrieve", "generate"]
    assert inner == [("retrieve", step) for step in NODE_NAMES]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_parent_context_principal_reaches_brain_search(home_graph: BrainSearchGraph, pattern: Pattern) -> None:
    cortex = build_cortex(home_graph, pattern=pattern)
    as_json = CortexContext(principal={"principalId": "alice", "groups": ["security"]})  # type: ignore[arg-type]
    for context in (CortexContext(principal=ALICE), as_json):
        hits = [hit["nodeId"] for hit in cortex.invoke(_ask(QUESTION), context=context)["hits"]]
        assert SECURED_POSTMORTEM in hits
    bob = cortex.invoke(_ask(QUESTION), context=CortexContext(principal=Principal("bob")))
    assert SECURED_POSTMORTEM not in [hit["nodeId"] for hit in bob["hits"]]
    with pytest.raises(AuthorizationError):  # secured search, no principal: fails closed
        cortex.invoke(_ask(QUESTION))
    with pytest.raises(AuthorizationError):
        cortex.invoke(_ask(QUESTION), context=CortexContext())


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_parent_context_services_reach_brain_search(home_services: SearchServices, pattern: Pattern) -> None:
    cortex = build_cortex(build_graph(SearchServices(backend=_NoStore())), pattern=pattern)
    state = cortex.invoke(_ask(QUESTION), context=CortexContext(principal=ALICE, services=home_services))
    assert SECURED_POSTMORTEM in [hit["nodeId"] for hit in state["hits"]]


class _NoStore:
    """A backend that must never be used (the run context's services replace it)."""

    name = "unused"

    def __getattr__(self, attribute: str) -> Any:
        raise AssertionError(f"the graph's default services were used ({attribute})")


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("Who are you?", "identity"),
        ("what can you do for me", "identity"),
        ("Translate this into French: hello", "translate"),
        ("Summarize the checkout latency incident", "summarize"),
        ("tl;dr of the MFA rollout", "summarize"),
        ("Rewrite this paragraph more politely", "rewrite"),
        ("What caused the duplicate card charges?", "rag"),
        ("token refresh", "rag"),
    ],
)
def test_intent_rules(question: str, intent: str) -> None:
    assert classify(question) == intent
    assert detect_intent({"user_query": question, "should_retrieve": True}) == {
        "intent": intent,
        "should_retrieve": intent == "rag",
    }


@pytest.mark.parametrize("pattern", PATTERNS)
def test_non_rag_intents_skip_retrieval(home_graph: BrainSearchGraph, pattern: Pattern) -> None:
    cortex = build_cortex(home_graph, pattern=pattern)
    steps = [next(iter(update)) for update in cortex.stream(_ask("Who are you?"), stream_mode="updates")]
    assert steps == ["extract_query", "detect_intent", "generate"]  # no principal needed: no search ran
    state = cortex.invoke(_ask("Translate this into French: hello"))
    assert state["answer"] == NEEDS_MODEL_ANSWER.format(intent="translate", query="Translate this into French: hello")
    assert state["hits"] == []
    assert state["promptPack"] is None


def test_a_search_without_results_says_so(home_graph: BrainSearchGraph) -> None:
    cortex = build_cortex(home_graph)
    question = "token refresh"
    state = cortex.invoke(_ask(question, filter={"tenantId": "acme", "projectKey": "NOPE", "secured": False}))
    assert state["hits"] == []
    assert state["answer"] == NO_RESULTS_ANSWER.format(query=question)


def test_a_bad_scope_fails_with_the_field_named(home_graph: BrainSearchGraph) -> None:
    with pytest.raises(InvalidRequestError, match=r"filter\.tenantId"):
        build_cortex(home_graph, pattern="mapped").invoke({"messages": [HumanMessage("token refresh")]}, context=None)


def test_a_configured_chat_model_answers_from_the_prompt_pack(home_graph: BrainSearchGraph) -> None:
    model = RecordingChatModel()
    cortex = build_cortex(home_graph, chat_model=model)
    state = cortex.invoke(_ask(QUESTION), context=CortexContext(principal=ALICE))
    assert state["answer"] == "model answer [1]"
    ((system, human),) = model.prompts
    assert isinstance(system, SystemMessage)
    pack = state["promptPack"]
    assert pack is not None
    assert pack["contextMarkdown"] in system.text
    assert human.text == QUESTION
    assert cortex.invoke(_ask("Who are you?"))["answer"] == IDENTITY_ANSWER
    assert len(model.prompts) == 1  # identity answers never call the model
    translated = cortex.invoke(_ask("Translate this into French: hello"))
    assert translated["answer"] == "model answer [1]"
    assert [message.text for message in model.prompts[-1]] == ["Translate this into French: hello"]


def test_each_turn_starts_from_fresh_results(home_graph: BrainSearchGraph) -> None:
    cortex = build_cortex(home_graph).copy(update={"checkpointer": InMemorySaver()})
    config: RunnableConfig = {"configurable": {"thread_id": "conversation-1"}}
    context = CortexContext(principal=ALICE)
    first = cortex.invoke(_ask(QUESTION), config, context=context)
    assert first["hits"]
    second = cortex.invoke({"messages": [HumanMessage("Who are you?")]}, config, context=context)
    assert second["hits"] == []
    assert second["promptPack"] is None
    assert [message.type for message in second["messages"]] == ["human", "ai", "human", "ai"]
    assert second["answer"] == IDENTITY_ANSWER
