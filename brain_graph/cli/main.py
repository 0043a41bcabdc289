"""The ``brain-graph`` command line: ``demo``, ``load``, ``index``, ``search``, ``profiles``, ``token``, ``attach``,
``serve``.

Each command imports what it runs inside its body, so ``--help`` and ``--version`` load no LangGraph,
store client, numpy or model. Bad input is one ``error:`` line naming the flag (exit 2).
"""

from __future__ import annotations

import io
import json
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from brain_graph.cli.flags import SEARCH_FLAGS, conflict, on_the_command_line
from brain_graph.core.errors import (
    AuthorizationError,
    BrainGraphError,
    CapacityError,
    ConfigurationError,
    DatasetError,
    InvalidRequestError,
    shown,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console

    from brain_graph.core.security import Principal
    from brain_graph.indexing.coverage import Coverage
    from brain_graph.pipeline.services import SearchServices
    from brain_graph.pipeline.state import BrainSearchInput

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # click's plain help: paragraphs rewrapped to the width, no "<bool>" on flags
    help="Deterministic GraphRAG search for LangGraph.",
)


@cache
def _err() -> Console:
    """The console of stderr for notes, warnings and progress (rich is imported on first use)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _print_version(value: bool) -> None:
    """``--version``: print the installed version and stop."""
    if value:
        typer.echo(f"brain-graph {metadata.version('brain-graph')}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Deterministic GraphRAG search for LangGraph."""


DEMO_SEARCHES: tuple[dict[str, Any], ...] = (
    {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}},
    {
        "queryText": "duplicate card charges idempotency",
        "filter": {"tenantId": "acme", "projectKey": "PAY", "secured": False},
        "options": {"topK": 5, "expandDepth": 2},
    },
)
EXIT_CODES: dict[type[BrainGraphError], int] = {
    InvalidRequestError: 2,
    DatasetError: 2,
    CapacityError: 2,
    ConfigurationError: 2,
    AuthorizationError: 3,
}


def _fail(error: BrainGraphError) -> typer.Exit:
    """Exit with the error's one line: 2 bad input or configuration, 3 not authorised, 1 anything else."""
    message = " ".join(str(error).split())
    sys.stderr.write(f"error: {message}\n")
    return typer.Exit(code=next((c for t, c in EXIT_CODES.items() if isinstance(error, t)), 1))


def _services(store: Path | None) -> SearchServices:
    """Services from configuration; with ``store``, on that embedded store whatever the backend setting."""
    from brain_graph.pipeline.config import build_services, load_settings
    from brain_graph.stores.registry import build_backend

    settings = load_settings()
    backend = build_backend("embedded", store_path=store) if store is not None else None
    return build_services(settings, backend=backend)


def _load(services: SearchServices, path: Path, replace: bool, *, quiet: bool = False) -> None:
    from brain_graph.cli.progress import ProgressReporter
    from brain_graph.indexing.coverage import coverage
    from brain_graph.indexing.dataset import collector_paused, embedding_work, load_dataset, read_graph

    with collector_paused():
        dataset = read_graph(path)
        for line in coverage(dataset.node_records(), services.profiles).warnings():
            _err().print(f"warning: {line}", markup=False, highlight=False)
        total = embedding_work(dataset.node_records(), services.profiles)
        with ProgressReporter("embedding", total, _err(), quiet=quiet) as progress:
            report = load_dataset(
                dataset, services.backend, services.profiles, replace=replace, progress=progress.advance
            )
    if not quiet:
        _err().print(
            f"loaded {report.nodes} nodes, {report.edges} edges, {report.embedded + report.unchanged} vectors "
            f"from {path} "
            f"into the {services.backend.name} backend in {report.seconds:.1f} s"
        )
    if report.pending:
        _err().print(
            f"warning: the embedder failed on {report.pending} node(s); they were loaded without a vector "
            "(pending): run brain-graph index to retry them"
        )


STORE_HELP = "Embedded store file (overrides the configuration)."


@app.command()
def load(
    path: Annotated[
        Path | None, typer.Argument(metavar="PATH", help="Dataset file (JSON, see docs/dataset-format.md).")
    ] = None,
    example: Annotated[bool, typer.Option("--example", help="Load the bundled example graph.")] = False,
    merge: Annotated[bool, typer.Option("--merge", help="Upsert into the tenants instead of replacing them.")] = False,
    store: Annotated[Path | None, typer.Option(metavar="FILE", help=STORE_HELP)] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no summary on stderr.")] = False,
) -> None:
    """Load a dataset into the configured backend and embed it.

    The dataset holds nodes and edges (no vectors needed); each node is embedded with the embedders of
    the profiles that cover it. Idempotent: it replaces the dataset's tenants unless --merge.
    """
    if (path is None) == (not example):
        sys.stderr.write("error: give a dataset PATH or --example (not both)\n")
        raise typer.Exit(code=2)
    from brain_graph.indexing.dataset import example_dataset_path

    source = example_dataset_path() if example else path
    assert source is not None
    try:
        services = _services(store)
        try:
            _load(services, source, replace=not merge, quiet=quiet)
        finally:
            services.backend.close()
    except BrainGraphError as error:
        raise _fail(error) from None


@app.command()
def index(
    tenant: Annotated[
        list[str] | None,
        typer.Option("--tenant", metavar="TENANT", help="Tenant to index (repeatable; default: every tenant)."),
    ] = None,
    profile: Annotated[
        list[str] | None,
        typer.Option("--profile", metavar="PROFILE", help="Embedding profile id (repeatable; default: all)."),
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="Re-embed every node (needed after changing a profile's embedder).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as one JSON object on stdout.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no summary on stderr.")] = False,
    store: Annotated[Path | None, typer.Option(metavar="FILE", help=STORE_HELP)] = None,
) -> None:
    """Bring the vectors in step with the graph.

    Embeds new and changed nodes, deletes the vectors of deleted ones and retries pending ones. A second
    run over unchanged data embeds nothing (and loads no embedding model).
    """
    from brain_graph.cli.progress import ProgressReporter
    from brain_graph.indexing.indexer import Indexer

    try:
        services = _services(store)
        try:
            _check_profile_ids(services, profile or ())
            indexer = Indexer(services.backend, services.profiles)
            plan = indexer.plan(tenant, profile, full=full)
            total = indexer.total_nodes(plan)
            with ProgressReporter("indexing", total, _err(), quiet=quiet or as_json) as progress:
                report = indexer.execute(plan, progress=progress.advance)
        finally:
            services.backend.close()
    except InvalidRequestError as error:
        raise _fail(on_the_command_line(error, INDEX_FLAGS)) from None
    except BrainGraphError as error:
        raise _fail(error) from None
    if as_json:
        body = {"tenants": list(plan.tenants), "profiles": [p.profile_id for p in plan.profiles], **report.to_json()}
        sys.stdout.write(json.dumps(body, sort_keys=True) + "\n")
    elif not quiet:
        _err().print(
            f"indexed {len(plan.tenants)} tenant(s) in the {services.backend.name} backend: {report.summary()}"
        )
    if report.pending and not quiet:
        _err().print(
            f"warning: {report.pending} node(s) pending: the embedder failed on them; run brain-graph index again"
        )


INDEX_FLAGS = {"tenants": "--tenant", "profiles": "--profile"}
"""The fields of an index plan and the flags of ``index`` that set them."""


def _check_profile_ids(services: SearchServices, profile_ids: Sequence[str]) -> None:
    """Refuse profile ids the configuration does not declare, as a bad ``profiles`` field (``--profile``)."""
    known = [p.profile_id for p in services.profiles.profiles]
    unknown = sorted(set(profile_ids) - set(known))
    if unknown:
        problem = f"unknown embedding profile(s) {shown(unknown)}; the profiles are {known}"
        raise InvalidRequestError("profiles", problem)


SEARCH_CONFLICTS = (
    ("--principal", "--public", "--public searches public items only, whoever asks; drop one of them"),
    ("--group", "--public", "--public searches public items only, whoever asks; drop one of them"),
    ("--server", "--store", "the server searches its own store"),
)
SEARCH_NEEDS = (
    ("--group", "--principal", "groups belong to the principal searching"),
    ("--as-of", "--max-age-days", "--as-of is the time --max-age-days counts back from"),
)


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Query text.")],
    tenant: Annotated[str, typer.Option("--tenant", metavar="TENANT", help="Tenant id.")],
    project: Annotated[str | None, typer.Option("--project", metavar="KEY", help="Project key filter.")] = None,
    kind: Annotated[
        list[str] | None,
        typer.Option("--kind", metavar="KIND", help="Profile kind (repeatable), e.g. work, doc, code."),
    ] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", metavar="N", help="Number of hits (default 20).")] = None,
    depth: Annotated[int | None, typer.Option("--depth", metavar="N", help="Expansion depth (default 1).")] = None,
    max_nodes: Annotated[int | None, typer.Option("--max-nodes", metavar="N", help="Node cap (default 200).")] = None,
    max_episodes: Annotated[
        int | None, typer.Option("--max-episodes", metavar="N", help="Episode cap (default 10).")
    ] = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            metavar="MODE",
            help="vector, lexical or hybrid (default: hybrid where the store has lexical documents).",
        ),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option("--min-score", metavar="SCORE", help="Cite no candidate whose adjusted score is below this."),
    ] = None,
    node_type: Annotated[
        list[str] | None,
        typer.Option("--node-type", metavar="TYPE", help="Only nodes of this type (repeatable), e.g. cdm.doc."),
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", metavar="NS", help="Only nodes in this namespace (repeatable, any case)."),
    ] = None,
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", metavar="TAG", help="Only nodes with one of these tags (repeatable, any case)."),
    ] = None,
    updated_after: Annotated[
        str | None,
        typer.Option("--updated-after", metavar="TIME", help="Only nodes updated at or after this ISO-8601 time."),
    ] = None,
    max_age_days: Annotated[
        int | None,
        typer.Option("--max-age-days", metavar="DAYS", help="Only nodes updated at most DAYS before --as-of."),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of", metavar="TIME", help="The ISO-8601 time --max-age-days counts back from (default: now)."
        ),
    ] = None,
    public: Annotated[bool, typer.Option("--public", help="Search public items only (no principal needed).")] = False,
    principal: Annotated[
        str | None, typer.Option("--principal", metavar="ID", help="Principal id for a secured search.")
    ] = None,
    group: Annotated[
        list[str] | None, typer.Option("--group", metavar="GROUP", help="Group of --principal (repeatable).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as camelCase JSON.")] = False,
    store: Annotated[Path | None, typer.Option(metavar="FILE", help=STORE_HELP)] = None,
    server: Annotated[
        str | None,
        typer.Option("--server", metavar="URL", help="Search through this running LangGraph server instead."),
    ] = None,
) -> None:
    """Search and print the prompt pack (--json: the whole result).

    A search is secured unless --public: it needs --principal (and its --group memberships) and returns
    public items plus the secured items their ACLs grant; with --public it returns public items only.

    With --server URL the search runs on that brain-graph LangGraph server, which keeps its embedding
    model loaded: no model load per command. The principal is sent as a 60-second token minted with
    BRAIN_GRAPH_AUTH_SECRET when it is set, else in the run context (a server in insecure mode).
    """
    given = {
        "--principal": principal is not None,
        "--group": bool(group),
        "--public": public,
        "--server": server is not None,
        "--store": store is not None,
        "--as-of": as_of is not None,
        "--max-age-days": max_age_days is not None,
    }
    refusal = conflict(given, SEARCH_CONFLICTS, SEARCH_NEEDS)
    if refusal is not None:
        sys.stderr.write(f"error: {refusal}\n")
        raise typer.Exit(code=2)
    from brain_graph.core.contracts import BrainSearchResult
    from brain_graph.core.security import Principal
    from brain_graph.pipeline.state import search_input

    options = {
        key: value
        for key, value in {
            "topK": top_k,
            "expandDepth": depth,
            "maxNodes": max_nodes,
            "maxEpisodes": max_episodes,
            "retrievalMode": mode,
            "minScore": min_score,
        }.items()
        if value is not None
    }
    request = search_input(
        query,
        tenant,
        project_key=project,
        profile_kinds=kind or None,
        secured=not public,
        options=options,
        node_types=node_type or None,
        namespaces=namespace or None,
        tags=tag or None,
        updated_after=updated_after,
        max_age_days=max_age_days,
        as_of=as_of,
    )
    try:
        who = Principal(principal, tuple(group or ())) if principal is not None else None
        if server is not None:
            from brain_graph.cli.server_search import search_on_server

            output: Any = search_on_server(server, request, who)
        else:
            output = _search_here(request, who, store, tenant=tenant, public=public)
    except InvalidRequestError as error:
        raise _fail(on_the_command_line(error, SEARCH_FLAGS)) from None
    except BrainGraphError as error:
        raise _fail(error) from None
    result = BrainSearchResult.model_validate(output)
    for warning in result.warnings:
        _err().print(f"warning: {warning.message}", markup=False, highlight=False)
    if as_json:
        sys.stdout.write(json.dumps(result.to_wire(), indent=2, ensure_ascii=False, sort_keys=False) + "\n")
    else:
        sys.stdout.write(result.prompt_pack.context_markdown)


def _search_here(
    request: BrainSearchInput, who: Principal | None, store: Path | None, *, tenant: str, public: bool
) -> Any:
    """The output of the search of ``tenant`` in this process, on the configured backend (or ``store``)."""
    from brain_graph.graphs.search import build_graph
    from brain_graph.pipeline.state import BrainSearchContext

    services = _services(store)
    try:
        if who is None and not public and not services.service_principal:
            raise _refused_without_principal()
        output = build_graph(services).invoke(request, context=BrainSearchContext(principal=who))
        if not output["hits"]:
            _say_if_empty(services, tenant)
        return output
    finally:
        services.backend.close()


def _refused_without_principal() -> AuthorizationError:
    """The refusal of a secured search without a principal, in the terms of the flags."""
    return AuthorizationError(
        "a secured search needs --principal ID (with its --group memberships), or --public for public items only"
    )


def _say_if_empty(services: SearchServices, tenant: str) -> None:
    """On stderr, when the searched tenant holds no data at all: say so, and how to fill it (the
    result is still printed: an empty pack)."""
    if services.backend.admin.count(tenant).nodes == 0:
        how = (
            "check the mapping's tenant settings: brain-graph attach --check MAPPING"
            if services.backend.name == "mapped"
            else "fill it with: brain-graph load PATH (or brain-graph load --example)"
        )
        _err().print(f"note: tenant {tenant!r} holds no data in the {services.backend.name} backend; {how}")


PROFILES_CONFLICTS = (
    ("--default", "--check", "--default prints the shipped file and checks nothing"),
    ("--default", "--file", "--default prints the shipped file, not another one"),
)


@app.command()
def profiles(
    dataset: Annotated[
        Path | None,
        typer.Argument(metavar="DATASET", help="With --check: a dataset file to check the profiles against."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Check the profiles (and DATASET); exit 1 on warnings.")
    ] = False,
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", metavar="FILE", help="Profiles file (default: BRAIN_GRAPH_PROFILES, else the shipped one)."
        ),
    ] = None,
    shipped: Annotated[
        bool, typer.Option("--default", help="Print the shipped profiles file (a start for your own).")
    ] = False,
) -> None:
    """Print the embedding profiles the configuration declares.

    Each profile's node types, text fields and embedder. With --check DATASET, also counts per node type
    the nodes each profile will embed, and warns (one line per kind) of node types no profile covers,
    fields no node has and fields nothing uses.
    """
    refusal = conflict({"--default": shipped, "--check": check, "--file": file is not None}, PROFILES_CONFLICTS)
    if refusal is None and dataset is not None and not check:
        refusal = "DATASET needs --check"
    if refusal is not None:
        sys.stderr.write(f"error: {refusal}\n")
        raise typer.Exit(code=2)
    from brain_graph.embedding.profiles_file import default_profiles_path

    if shipped:
        sys.stdout.write(default_profiles_path().read_text(encoding="utf-8"))
        return
    from brain_graph.indexing.coverage import coverage
    from brain_graph.indexing.dataset import read_graph
    from brain_graph.pipeline.config import configured_profiles_file, load_settings, profiles_from_settings

    try:
        settings = load_settings()
        if file is not None:
            settings = settings.model_copy(update={"profiles": str(file)})
        configured_profiles_file(settings)
        registry = profiles_from_settings(settings)
        found = coverage(read_graph(dataset).node_records(), registry) if dataset is not None else None
    except BrainGraphError as error:
        raise _fail(error) from None
    source = settings.profiles or f"the shipped default ({default_profiles_path()})"
    lines = [f"profiles file: {source}"]
    for p in registry.profiles:
        lines.append(
            f"profile {p.profile_id}: kind {p.profile_kind}{' (default)' if p.default else ''}; embeds "
            f"{', '.join(p.node_types)} from {', '.join(p.text_fields)} (at most {p.max_chars} characters) with "
            f"{registry.embedder_name(p)} (dimension {p.dimension})"
        )
    if found is not None:
        lines.extend(_coverage_lines(found))
    warnings = found.warnings() if found is not None else []
    if found is not None:
        lines.append(f"{len(warnings)} warning(s)" if warnings else "ok: no warnings")
    sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stderr.write("".join(f"warning: {line}\n" for line in warnings))
    if warnings:
        raise typer.Exit(code=1)


def _coverage_lines(found: Coverage) -> list[str]:
    """One line per node type of the data: its nodes and what each profile embeds of them."""
    lines = []
    for seen in found.types:
        if seen.embedded:
            embeds = "; ".join(f"{profile_id} embeds {count}" for profile_id, count in sorted(seen.embedded.items()))
        else:
            embeds = f"no profile embeds it ({'declared' if seen.declared else 'not declared'})"
        lines.append(f"node type {seen.node_type}: {seen.nodes} node(s); {embeds}")
    return lines


@app.command()
def demo(
    store: Annotated[
        Path | None, typer.Option(metavar="FILE", help="Embedded store file (default: the configured one).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
) -> None:
    """Load the example graph and run example searches on it.

    The graph goes into the embedded store (--store, else the configured one).
    """
    from brain_graph.core.contracts import BrainSearchResult
    from brain_graph.core.environment import read_settings
    from brain_graph.core.security import Principal
    from brain_graph.graphs.search import build_graph
    from brain_graph.indexing.dataset import example_dataset_path
    from brain_graph.pipeline.config import build_services, load_settings
    from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput
    from brain_graph.stores.embedded import EmbeddedSettings
    from brain_graph.stores.registry import build_backend

    try:
        path = store or read_settings(EmbeddedSettings).resolved_store_path
        services = build_services(load_settings(), backend=build_backend("embedded", store_path=path))
    except BrainGraphError as error:
        raise _fail(error) from None
    try:
        _load(services, example_dataset_path(), replace=True, quiet=quiet)
        graph = build_graph(services)
        for request in DEMO_SEARCHES:
            _err().rule(f"search: {request['queryText']!r} tenant={request['filter']['tenantId']}")
            result = BrainSearchResult.model_validate(graph.invoke(cast(BrainSearchInput, request)))
            sys.stdout.write(result.prompt_pack.context_markdown + "\n")
        secured = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}
        _err().rule("secured search as principal alice (group security)")
        result = BrainSearchResult.model_validate(
            graph.invoke(
                cast(BrainSearchInput, secured), context=BrainSearchContext(principal=Principal("alice", ("security",)))
            )
        )
        sys.stdout.write(result.prompt_pack.context_markdown)
        _err().print(f"store: {path}")
    except BrainGraphError as error:
        raise _fail(error) from None
    finally:
        services.backend.close()


@app.command()
def token(
    subject: Annotated[
        str, typer.Option("--subject", "-s", metavar="ID", help="Principal id (the token's sub claim).")
    ],
    tenant: Annotated[
        list[str] | None,
        typer.Option("--tenant", metavar="TENANT", help="Tenant the token may read (required, repeatable)."),
    ] = None,
    group: Annotated[
        list[str] | None, typer.Option("--group", metavar="GROUP", help="Principal group (repeatable).")
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", metavar="SCOPE", help="reader or maintainer (repeatable; default: reader)."),
    ] = None,
    ttl: Annotated[
        int | None, typer.Option("--ttl", metavar="SECONDS", help="Seconds until the token expires (default 3600).")
    ] = None,
) -> None:
    """Mint a bearer token and print only it on stdout.

    The token is signed with BRAIN_GRAPH_AUTH_SECRET. For example:

    \b
    TOKEN=$(brain-graph token -s alice --tenant acme)
    """
    from brain_graph.auth.settings import load_auth_settings
    from brain_graph.auth.tokens import DEFAULT_TTL_S

    try:
        if not subject:
            raise InvalidRequestError("context.principal.principalId", "a token needs a principal id (got '')")
        issuer = load_auth_settings().issuer_for_minting()
        minted = issuer.mint(
            subject,
            tenant or (),
            groups=group or (),
            scopes=scope or ("reader",),
            ttl_s=DEFAULT_TTL_S if ttl is None else ttl,
        )
    except InvalidRequestError as error:
        raise _fail(on_the_command_line(error, TOKEN_FLAGS)) from None
    except BrainGraphError as error:
        raise _fail(error) from None
    sys.stdout.write(minted + "\n")


TOKEN_FLAGS = {
    "context.principal.principalId": "--subject",
    "context.principal.tenants": "--tenant",
    "context.principal.groups": "--group",
    "tenant": "--tenant",
    "scope": "--scope",
    "ttl": "--ttl",
}
"""The fields a token's minting checks and the flags of ``token`` that set them."""


ATTACH_CONFLICTS = (
    ("--check", "--out", "--out writes the mapping --suggest drafts"),
    ("--check", "--labels", "--labels chooses what --suggest reads"),
    ("--check", "--no-weaviate", "--no-weaviate changes what --suggest reads"),
)


@app.command()
def attach(
    suggest: Annotated[
        bool, typer.Option("--suggest", help="Read the live schema and print a draft mapping (TOML).")
    ] = False,
    check: Annotated[
        Path | None, typer.Option("--check", metavar="MAPPING", help="Check a mapping file against the live data.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="FILE", help="With --suggest: write the mapping to FILE.")
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option("--labels", metavar="LABELS", help="With --suggest: labels to read (comma-separated, * ok)."),
    ] = None,
    weaviate: Annotated[
        bool, typer.Option("--weaviate/--no-weaviate", help="With --suggest: also read the Weaviate collections.")
    ] = True,
    sample: Annotated[
        int, typer.Option("--sample", metavar="N", min=1, max=100_000, help="Nodes read of each label (its first N).")
    ] = 1_000,
) -> None:
    """Attach read-only to an existing Neo4j graph (and Weaviate).

    Uses the NEO4J_* and WEAVIATE_* settings. --suggest prints a draft mapping for BRAIN_GRAPH_MAPPING;
    --check MAPPING reports its problems (one line each, naming the mapping key) and counts, and exits 0
    when the mapping is usable, 2 when not.
    """
    if suggest == (check is not None):
        sys.stderr.write("error: give --suggest or --check MAPPING (one of them)\n")
        raise typer.Exit(code=2)
    given = {"--check": check is not None, "--out": out is not None, "--labels": labels is not None}
    refusal = conflict({**given, "--no-weaviate": not weaviate}, ATTACH_CONFLICTS)
    if refusal is not None:
        sys.stderr.write(f"error: {refusal}\n")
        raise typer.Exit(code=2)
    from brain_graph.pipeline.config import load_settings, profiles_from_settings, safe_edge_type_names
    from brain_graph.stores.mapped.attach import (
        ProfileSpec,
        check_mapping,
        connection_settings,
        exit_code,
        render_toml,
        suggest_mapping,
    )

    if check is not None and not check.is_file():
        sys.stderr.write(f"error: --check {str(check)!r}: no such mapping file\n")
        raise typer.Exit(code=2)
    try:
        settings = load_settings()
        registry = profiles_from_settings(settings)
        profiles = [
            ProfileSpec(p.profile_id, p.node_types[0], registry.embedder_name(p), p.dimension)
            for p in registry.profiles
        ]
        safe = safe_edge_type_names(settings.safe_edge_types)
        connection = connection_settings(check)
        if check is None:
            suggested = suggest_mapping(
                connection,
                None if weaviate else False,
                labels=labels,
                profiles=profiles,
                safe_edge_types=safe,
                sample=sample,
            )
            text = render_toml(suggested)
            if out is None:
                sys.stdout.write(text)
            else:
                out.write_text(text, encoding="utf-8")
                m = suggested.mapping
                _err().print(
                    f"wrote {out}: {len(m.nodes)} label(s), {len(m.edges)} relationship type(s), "
                    f"{len(m.vectors)} vector source(s), {len(suggested.guesses)} guess(es) marked '# guessed:'"
                )
            return
        report = check_mapping(check, connection, profiles=profiles, safe_edge_types=safe, sample=sample)
    except BrainGraphError as error:
        raise _fail(error) from None
    sys.stdout.write("".join(line + "\n" for line in [*report.count_lines(), report.summary()]))
    sys.stderr.write("".join(line + "\n" for line in report.problem_lines()))
    raise typer.Exit(code=exit_code(report))


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", metavar="HOST", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="Port to listen on.")] = 8000,
    workers: Annotated[
        int, typer.Option("--workers", metavar="N", help="Worker processes sharing the port (1 to 64).")
    ] = 1,
    log_level: Annotated[
        str, typer.Option("--log-level", metavar="LEVEL", help="uvicorn's log level (info, warning, debug...).")
    ] = "info",
) -> None:
    """Serve GraphQL, the graph API and MCP in N worker processes.

    Serves /graphql, /graph/..., /brain/mcp and /brain/health, /brain/ready and /brain/metrics
    without the LangGraph server, with its BRAIN_GRAPH_* settings (bearer tokens are required, or
    BRAIN_GRAPH_AUTH=insecure). With --workers N above 1, set BRAIN_GRAPH_RATE_LIMIT_STORAGE to a
    shared storage (redis://host:6379) so that a principal has one budget across the workers, not
    one per worker; PROMETHEUS_MULTIPROC_DIR is made for the run unless set. For example:

    \b
    brain-graph serve --workers 4 --port 8000
    """
    from brain_graph.serving.standalone import ServeOptions
    from brain_graph.serving.standalone import serve as serve_app

    def warn(line: str) -> None:
        _err().print(f"warning: {line}", markup=False, highlight=False)

    try:
        serve_app(ServeOptions(host=host, port=port, workers=workers, log_level=log_level.lower()), warn)
    except BrainGraphError as error:
        raise _fail(error) from None


def main() -> None:  # pragma: no cover - console entry
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character gets its escape, not a traceback
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
