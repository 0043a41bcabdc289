"""A LangChain retriever over the brain_search graph: in process, or on a LangGraph server."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config, patch_config
from langgraph.pregel import Pregel
from pydantic import ConfigDict, Field, PrivateAttr, StrictBool, StrictStr, ValidationError, model_validator

from brain_graph.auth.principals import as_principal
from brain_graph.core.contracts import BrainSearchOptionsInput, BrainSearchResult
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.requests import invalid_request
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput, search_input

PRINCIPAL_KEY = "principal"


def configured_principal(config: RunnableConfig | None) -> Principal | None:
    """The principal of a call: ``config["configurable"]["principal"]``, a :class:`Principal` or its
    JSON form (validated: a malformed one is an :class:`~brain_graph.core.errors.InvalidRequestError`)."""
    return as_principal(ensure_config(config).get("configurable", {}).get(PRINCIPAL_KEY))


def graph_config(config: RunnableConfig | None, callbacks: Any) -> RunnableConfig:
    """The config of the graph run a retriever call makes: the caller's (``configurable`` such as a
    ``thread_id``, recursion limit, tags, metadata) with the retriever run's child ``callbacks``; the
    principal is left out of ``configurable`` (it travels in the run context)."""
    base = ensure_config(config)
    configurable = {key: value for key, value in base.get("configurable", {}).items() if key != PRINCIPAL_KEY}
    return patch_config({**base, "configurable": configurable}, callbacks=callbacks)


class BrainSearchRetriever(BaseRetriever):
    """One brain_search per query; one :class:`Document` per passage, in rank order.

    ``page_content`` is the passage text; ``metadata`` holds ``sourceNodeId``, ``sourceKind``,
    ``url``, ``title``, ``nodeType``, the passage's candidate scores (``adjustedScore``, the rank
    score; ``score``, the same value; ``vectorScore``, the similarity to the query, ``None`` without
    a vector), ``reachedBy`` (``exact``, ``vector`` or ``lexical`` for a hit, ``graph`` for a node
    reached by expansion), ``via``
    (how expansion reached it, camelCase, ``None`` for a hit) and ``citation`` (the passage's ``[n]``
    number in the prompt pack, or ``None`` beyond the citation limit). ``Document.id`` is the source
    node id.

    ``graph`` is any runnable brain_search graph: a compiled one (:func:`brain_graph.build_graph`; it
    gets a :class:`BrainSearchContext`) or a :class:`langgraph.pregel.remote.RemoteGraph` of a LangGraph
    server (it gets the JSON context ``{"principal": {principalId, groups}}``; its errors arrive as
    ``RemoteException`` carrying ``{error, message}``). Without ``graph``, one is built from
    ``services`` or the environment's services; ``services`` only apply in process.

    ``secured`` searches need a principal: ``principal`` here, or per call in
    ``config={"configurable": {"principal": Principal | {principalId, groups}}}``, which overrides it.
    Without one they fail closed (:class:`brain_graph.AuthorizationError`). A search answered without
    its graph store has no passages: :func:`to_documents` says so with a ``BackendUnavailableError``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")  # a misspelt argument is an error

    graph: Runnable[Any, Any] | None = None
    services: SearchServices | None = None
    tenant_id: StrictStr
    project_key: StrictStr | None = None
    profile_kinds: list[StrictStr] | None = None
    node_types: list[StrictStr] | None = None
    namespaces: list[StrictStr] | None = None
    tags: list[StrictStr] | None = None
    updated_after: StrictStr | None = None
    max_age_days: int | None = Field(default=None, strict=True)
    as_of: StrictStr | None = None
    options: BrainSearchOptionsInput = Field(default_factory=BrainSearchOptionsInput)
    principal: Principal | None = None
    secured: StrictBool = True  # "false" or 0 is not coerced

    _built: Runnable[Any, Any] | None = PrivateAttr(default=None)

    def __init__(self, **fields: Any) -> None:
        """Arguments as above; a bad one is an :class:`~brain_graph.core.errors.InvalidRequestError` naming it."""
        try:
            super().__init__(**fields)
        except ValidationError as error:
            raise invalid_request(error) from None

    @model_validator(mode="after")
    def _services_need_an_in_process_graph(self) -> BrainSearchRetriever:
        if self.services is not None and self.graph is not None and not isinstance(self.graph, Pregel):
            raise ValueError("services apply to an in-process graph only; a remote graph uses the server's")
        return self

    def _graph(self) -> Runnable[Any, Any]:
        if self.graph is not None:
            return self.graph
        if self._built is None:
            self._built = build_graph(self.services)
        return self._built

    def search_input(self, query: str) -> BrainSearchInput:
        """The graph input this retriever sends for ``query``."""
        return search_input(
            query,
            self.tenant_id,
            project_key=self.project_key,
            profile_kinds=self.profile_kinds,
            secured=self.secured,
            options=self.options.to_wire(),
            node_types=self.node_types,
            namespaces=self.namespaces,
            tags=self.tags,
            updated_after=self.updated_after,
            max_age_days=self.max_age_days,
            as_of=self.as_of,
        )

    def _context(self, principal: Principal | None) -> BrainSearchContext | dict[str, Any] | None:
        """The run context: a :class:`BrainSearchContext` in process, JSON for any other graph."""
        principal = principal if principal is not None else self.principal
        if isinstance(self._graph(), Pregel):
            return BrainSearchContext(principal=principal, services=self.services)
        return {PRINCIPAL_KEY: principal.to_wire()} if principal is not None else None

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        return super().invoke(input, config, **kwargs, principal=configured_principal(config), run_config=config)

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        principal = configured_principal(config)
        return await super().ainvoke(input, config, **kwargs, principal=principal, run_config=config)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        principal: Principal | None = None,
        run_config: RunnableConfig | None = None,
    ) -> list[Document]:
        config = graph_config(run_config, run_manager.get_child())
        output = self._graph().invoke(self.search_input(query), config, context=self._context(principal))
        return to_documents(BrainSearchResult.model_validate(output))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        principal: Principal | None = None,
        run_config: RunnableConfig | None = None,
    ) -> list[Document]:
        config = graph_config(run_config, run_manager.get_child())
        output = await self._graph().ainvoke(self.search_input(query), config, context=self._context(principal))
        return to_documents(BrainSearchResult.model_validate(output))


GRAPH_STORE = "graph store"


def to_documents(result: BrainSearchResult) -> list[Document]:
    """The passages of a search result as documents, in the result's (rank) order, each with the
    scores of its candidate. A vector-only result (``graphContextIncluded`` false, docs/degradation.md)
    has no passages: it is a :class:`~brain_graph.core.errors.BackendUnavailableError` naming the
    :data:`GRAPH_STORE`, never an empty list that would read as "nothing found"."""
    if not result.graph_context_included:
        raise BackendUnavailableError(
            GRAPH_STORE, "the search could answer vector matches only, and a retriever returns passages"
        )
    candidates = {candidate.node_id: candidate for candidate in result.candidates}
    numbers = {citation.source_node_id: index for index, citation in enumerate(result.prompt_pack.citations, 1)}
    documents = []
    for passage in result.passages:
        candidate = candidates.get(passage.source_node_id)
        via = candidate.via if candidate is not None else None
        metadata = {
            "sourceNodeId": passage.source_node_id,
            "sourceKind": passage.source_kind,
            "url": passage.url,
            "title": candidate.title if candidate is not None else None,
            "nodeType": candidate.node_type if candidate is not None else None,
            "score": candidate.adjusted_score if candidate is not None else None,
            "adjustedScore": candidate.adjusted_score if candidate is not None else None,
            "vectorScore": candidate.vector_score if candidate is not None else None,
            "reachedBy": candidate.reached_by if candidate is not None else None,
            "via": via.model_dump(by_alias=True) if via is not None else None,
            "citation": numbers.get(passage.source_node_id),
        }
        documents.append(Document(id=passage.source_node_id, page_content=passage.text, metadata=metadata))
    return documents
