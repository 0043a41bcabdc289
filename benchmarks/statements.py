"""The Neo4j statements of server-backend searches, replayed one by one: database hits, time and
transaction memory per statement, so that a change to the Cypher can be measured statement by
statement (the search benchmark measures whole searches).

``python -m benchmarks.statements --nodes 1000`` (servers from ``eval "$(scripts/services up)"``):
loads the benchmark's synthetic graph of that size into Neo4j + Weaviate, runs ``--warm-up``
searches, records the statements of ``--searches`` more (the search benchmark's queries, options from
``--options``), then replays each recorded statement ``--replays`` times in a READ session and once
under ``PROFILE``, and drops the graph. Printed per kind of statement: how many were recorded, the
p50 of the client's wall time and of the server's own time (``result_available_after`` +
``result_consumed_after``, whole milliseconds), and the p50 of the plan's database hits and of its
transaction memory (``GlobalMemory``, bytes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, LiteralString, cast

import neo4j

from benchmarks.load import run_load
from benchmarks.search_latency import SERVER, make_backend, prepare, servers_configured
from brain_graph import BrainSearchInput, Neo4jWeaviateBackend, SearchServices, build_graph, default_profiles
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings
from brain_graph.stores.neo4j_weaviate.neo4j import cypher

# The statements a search sends, by kind (made per set of edge types, as the search makes them).
KINDS: dict[str, Callable[[tuple[str, ...]], str]] = {
    "SEEDS": cypher.seeds,
    "HOP": cypher.hop,
    "CONTEXT": cypher.context,
    "CURRENT_GENERATION": lambda _types: cypher.CURRENT_GENERATION,
}

Recorded = tuple[str, dict[str, Any]]


def kind_of(query: str, params: Mapping[str, Any]) -> str:
    """The kind of a recorded statement (``OTHER`` for one a search does not usually send)."""
    types = tuple(params.get("edgeTypes", ()))
    return next((name for name, made in KINDS.items() if made(types) == query), "OTHER")


def plan_hits(plan: Mapping[str, Any]) -> int:
    """The database hits of a profiled plan, its operators' summed."""
    children: Sequence[Mapping[str, Any]] = plan.get("children", ())
    return int(plan.get("dbHits", 0)) + sum(plan_hits(child) for child in children)


@dataclass(frozen=True)
class KindRow:
    """One kind of statement, replayed."""

    kind: str
    recorded: int
    wall_ms: float
    server_ms: float
    db_hits: float
    memory_bytes: float | None


def table(rows: Sequence[KindRow]) -> str:
    """The rows as a markdown table."""
    lines = [
        "| statement | recorded | wall ms p50 | server ms p50 | db hits p50 | transaction memory p50 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        memory = "-" if row.memory_bytes is None else f"{row.memory_bytes / 1024:,.0f} KB"
        lines.append(
            f"| {row.kind} | {row.recorded} | {row.wall_ms:.2f} | {row.server_ms:.0f} | {row.db_hits:,.0f} | {memory} |"
        )
    return "\n".join(lines)


def record(backend: Neo4jWeaviateBackend, run: Callable[[], None]) -> list[Recorded]:
    """The statements ``run`` sends through the backend's Neo4j client, with their parameters."""
    client = backend.neo4j
    sent: list[Recorded] = []
    original = client.read

    def recording(query: LiteralString, params: Mapping[str, Any]) -> list[neo4j.Record]:
        sent.append((query, dict(params)))
        return original(query, params)

    client.read = recording  # type: ignore[method-assign]
    try:
        run()
    finally:
        del client.read
    return sent


def replay(session: neo4j.Session, statements: Sequence[Recorded], replays: int) -> KindRow:
    """Each statement ``replays`` times, then once profiled."""
    wall, server, hits, memory = [], [], [], []
    for _ in range(replays):
        for query, params in statements:
            started = time.perf_counter()
            result = session.run(query, params)
            list(result)  # the records are transferred, as in a search (consume() alone discards them)
            wall.append((time.perf_counter() - started) * 1000)
            summary = result.consume()
            server.append((summary.result_available_after or 0) + (summary.result_consumed_after or 0))
    for query, params in statements:
        profile = session.run("PROFILE " + query, params).consume().profile or {}
        hits.append(plan_hits(profile))
        used = profile.get("args", {}).get("GlobalMemory")
        if used is not None:
            memory.append(float(used))
    return KindRow(
        kind_of(*statements[0]),
        len(statements),
        statistics.median(wall),
        statistics.median(server),
        statistics.median(hits),
        statistics.median(memory) if memory else None,
    )


def by_kind(statements: Sequence[Recorded]) -> Iterator[list[Recorded]]:
    """The statements grouped by kind, in the order kinds were first sent."""
    groups: dict[str, list[Recorded]] = {}
    for query, params in statements:
        groups.setdefault(kind_of(query, params), []).append((query, params))
    yield from groups.values()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.statements", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000, help="size of the synthetic graph (default 1000)")
    parser.add_argument("--searches", type=int, default=50, help="searches recorded (default 50)")
    parser.add_argument("--warm-up", type=int, default=100, help="searches before recording (default 100)")
    parser.add_argument("--replays", type=int, default=20, help="replays of each statement (default 20)")
    parser.add_argument("--options", default="{}", help="search options as JSON, e.g. '{\"expandDepth\": 2}'")
    args = parser.parse_args(argv)
    if not servers_configured():
        parser.error('servers not configured: eval "$(scripts/services up)"')
    options = json.loads(args.options)
    profiles = default_profiles()
    with tempfile.TemporaryDirectory() as work:
        data = prepare(args.nodes, args.searches, Path(work), f"stmts{uuid.uuid4().hex[:6]}-", profiles)
        backend = cast(Neo4jWeaviateBackend, make_backend(SERVER, Path(work)))
        try:
            run_load(data.path, SERVER)
            graph = build_graph(SearchServices(backend=backend, profiles=profiles))
            scope = {"tenantId": data.tenant, "secured": False}
            batch = [cast(BrainSearchInput, {"queryText": t, "filter": scope, "options": options}) for t in data.texts]
            for index in range(args.warm_up):
                graph.invoke(batch[index % len(batch)])

            def searches() -> None:
                for request in batch:
                    graph.invoke(request)

            sent = record(backend, searches)
            settings = Neo4jWeaviateSettings()
            driver = neo4j.GraphDatabase.driver(
                settings.neo4j_uri,
                auth=(settings.neo4j_user, settings.neo4j_password),
                notifications_min_severity="OFF",
            )
            try:
                with driver.session(database=settings.neo4j_database, default_access_mode=neo4j.READ_ACCESS) as session:
                    rows = [replay(session, group, args.replays) for group in by_kind(sent)]
            finally:
                driver.close()
        finally:
            backend.admin.drop_tenants(data.tenants)
            backend.close()
    print(f"{args.nodes} nodes, options {json.dumps(options, sort_keys=True)}, {args.searches} searches")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
