"""The benchmark's pure parts, without servers: the synthetic-graph CLI and the result writers."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import neo4j
import pytest

from benchmarks import observability_overhead, server_cpu, statements, step_profile, synthetic
from benchmarks.report import PeerRow, Row, latency, percentile, text_table, write_results
from brain_graph.graphs.search import PIPELINE, build_graph, compile_steps
from brain_graph.indexing.dataset import read_graph
from brain_graph.observability.metrics import REGISTRY
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.neo4j_weaviate.neo4j import cypher


def _row(backend: str, nodes: int, p50: float) -> Row:
    return Row(
        backend=backend,
        nodes=nodes,
        edges=2 * nodes,
        vectors=nodes // 2,
        load_s=nodes / 4000,
        peak_mb=150.0,
        embed_s=0.1,
        p50_ms=p50,
        p95_ms=p50 * 1.3,
        p99_ms=p50 * 1.5,
        cpu_p50_ms=p50 / 2,
        first_ms=p50 * 3,
        p50_d2_ms=p50 * 1.2,
        p95_d2_ms=p50 * 1.4,
        numpy_p50_ms=0.5,
        numpy_p95_ms=0.6,
        round_trips="neo4j 6 + weaviate 2" if backend != "embedded" else "",
        sequential_per_s=1000 / p50,
        concurrent_per_s=1500 / p50,
        concurrency=8,
        split_ms={"retrieve": p50 / 3, "graph": p50 / 3},
        server_cpu_ms={"neo4j": p50 / 4, "weaviate": p50 / 5} if backend != "embedded" else {},
    )


def test_synthetic_cli_is_seeded_and_loadable(tmp_path: Path) -> None:
    paths = [tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"]
    for path, seed in zip(paths, (3, 3, 4), strict=True):
        arguments = ["--nodes", "120", "--seed", str(seed), "--tenant-prefix", "x-", "--out", str(path)]
        assert synthetic.main(arguments) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()
    graph = read_graph(paths[0])
    assert len(graph.nodes) == 120
    assert graph.edges
    assert {n.tenant_id for n in graph.nodes} == {"x-tenant0", "x-tenant1"}


def test_the_search_benchmark_runs_a_million_nodes_only_when_asked() -> None:
    """1M nodes take many minutes and gigabytes of disk: never by default, never in the smoke run."""
    from benchmarks.search_latency import parse_args

    assert max(parse_args([]).sizes) <= 100_000
    assert parse_args(["--smoke"]).sizes == [300]
    assert parse_args(["--sizes", "1000000"]).sizes == [1_000_000]


def test_percentiles() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.95) == 95.0
    assert percentile([7.0], 0.99) == 7.0
    assert latency(values) == (50.5, 95.0, 99.0)


def test_writers(tmp_path: Path) -> None:
    rows = [_row(backend, nodes, p50) for nodes, p50 in ((1000, 20.0), (10000, 25.0)) for backend in ("embedded", "s")]
    peers = [PeerRow(1000, 500, 1000, 40.0, 50.0, 60.0), PeerRow(10000, 5000, 10000, 250.0, 300.0, 320.0)]
    meta = {"machine": {"cpus": 2}, "arguments": {"sizes": [1000, 10000]}, "topK": 20}
    assert "1.50" in text_table(rows)  # the concurrent / sequential ratio

    paths = write_results(tmp_path, rows, peers, meta, "python -m benchmarks.search_latency")

    assert [p.name for p in paths] == ["search_latency.json", "search_latency.md", "search_latency.png"]
    data = json.loads(paths[0].read_text(encoding="utf-8"))
    assert data["rows"][0]["nodes_per_s"] == 4000
    assert data["rows"][0]["concurrent_speedup"] == 1.5
    assert data["peer"][1]["p50_ms"] == 250.0
    markdown = paths[1].read_text(encoding="utf-8")
    assert "| 10000 | 25.0 / 32.5 | 25.0 / 32.5 | 250.0 / 300.0 | 0.10 | 0.10 |" in markdown
    assert "| 12.5 | neo4j 6.2 + weaviate 5.0 | 75.0 |" in markdown  # client cpu, servers' cpu, first search
    assert "| 10.0 | - | 60.0 |" in markdown  # no servers for the embedded store
    assert data["rows"][1]["total_cpu_ms"] == 10.0 + 5.0 + 4.0
    assert paths[2].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_server_cpu_is_read_for_the_services_pid_files(tmp_path: Path) -> None:
    (tmp_path / "neo4j").mkdir()
    (tmp_path / "neo4j" / "pid").write_text(str(os.getpid()), encoding="ascii")  # a live process
    (tmp_path / "weaviate").mkdir()
    (tmp_path / "weaviate" / "pid").write_text("not a pid", encoding="ascii")
    pids = server_cpu.server_pids(tmp_path)
    assert pids == {"neo4j": os.getpid()}
    before = server_cpu.snapshot(pids)
    deadline = time.process_time() + 0.05
    while time.process_time() < deadline:  # spend CPU in this process
        pass
    spent = server_cpu.per_search_ms(before, server_cpu.snapshot(pids), 2)
    assert set(spent) == {"neo4j"}
    assert spent["neo4j"] > 0


def test_server_cpu_per_search_is_the_mean_of_processes_read_twice() -> None:
    assert server_cpu.per_search_ms({"neo4j": 1.0, "weaviate": 2.0}, {"neo4j": 1.5}, 10) == {"neo4j": 50.0}
    assert server_cpu.per_search_ms({"neo4j": 1.0}, {"neo4j": 2.0}, 0) == {}
    assert server_cpu.cpu_seconds(-1) is None


def test_recorded_statements_are_named_and_their_plans_summed() -> None:
    types = ("DEPENDS_ON", "REFERENCES")
    params = {"edgeTypes": list(types)}
    assert statements.kind_of(cypher.seeds(types), params) == "SEEDS"
    assert statements.kind_of(cypher.context(types), params) == "CONTEXT"
    assert statements.kind_of(cypher.hop(types), params) == "HOP"
    assert statements.kind_of(cypher.context(types), {"edgeTypes": ["DEPENDS_ON"]}) == "OTHER"
    plan = {"dbHits": 2, "children": [{"dbHits": 3, "children": [{"dbHits": 5}]}, {"rows": 1}]}
    assert statements.plan_hits(plan) == 10
    rows = [
        statements.KindRow("SEEDS", 50, 7.456, 5.0, 1409.0, 70656.0),
        statements.KindRow("HOP", 2, 1.0, 0.0, 3, None),
    ]
    assert statements.table(rows).splitlines()[2:] == [
        "| SEEDS | 50 | 7.46 | 5 | 1,409 | 69 KB |",
        "| HOP | 2 | 1.00 | 0 | 3 | - |",
    ]


def test_profiled_graphs_give_the_search_graphs_pack(example_services: SearchServices) -> None:
    """The profiler's timed, recording and replaying graphs run the pipeline's steps in its order and
    return the pack the search graph returns (the replay with no work of the steps)."""
    provider = lambda: example_services  # noqa: E731
    request = {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}
    timings: step_profile.Timings = {}
    updates: dict[tuple[str, str], object] = {}
    expected = json.dumps(compile_steps(PIPELINE, provider).invoke(request), sort_keys=True)
    assert json.loads(expected)["promptPack"]["citations"]
    assert json.loads(expected)["graphNodes"]
    timed = compile_steps([(n, step_profile.timed(n, s, timings)) for n, s in PIPELINE], provider)
    recorder = compile_steps([(n, step_profile.recording(n, s, updates)) for n, s in PIPELINE], provider)
    replay = compile_steps([(n, step_profile.replaying(n, updates)) for n, _ in PIPELINE], provider)

    assert json.dumps(timed.invoke(request), sort_keys=True) == expected
    assert list(timings) == [name for name, _ in PIPELINE]
    assert all(len(values) == 1 and values[0][0] >= 0 and values[0][1] >= 0 for values in timings.values())
    assert json.dumps(recorder.invoke(request), sort_keys=True) == expected
    assert sorted(updates) == sorted((name, request["queryText"]) for name, _ in PIPELINE)
    assert json.dumps(replay.invoke(request), sort_keys=True) == expected
    assert step_profile.invoke_all(replay, [request, request])[1][0] > 0


def test_profile_summary_names_each_step_and_the_floor() -> None:
    profile = step_profile.StepProfile(
        "embedded", 1000, 50, 18.0, 18.5, {"embed": (0.5, 0.5), "retrieve": (3.0, 2.5)}, 6.0, 5.0, 2.5
    )
    lines = step_profile.summary(profile).splitlines()
    assert lines[0] == "# embedded, 1000 nodes: p50 of 50 searches, ms"
    assert "| search (CPU: the process's) | 18.00 | 18.50 |" in lines
    assert "| retrieve (CPU: its thread's) | 3.00 | 2.50 |" in lines
    assert "| steps together | 3.50 | 3.00 |" in lines
    assert "| rest: LangGraph, node wrappers | 6.00 | |" in lines
    assert "| framework (the steps replayed) | 5.00 | |" in lines
    assert lines[-1] == "Floor ratio (framework + numpy) / numpy: 3.00; the search's ratio: 7.20."


@pytest.mark.integration
def test_mapped_latency_smoke_searches_both_systems_on_the_real_servers(tmp_path: Path) -> None:
    """``python -m benchmarks.mapped_latency --smoke`` end to end: a 50-chunk lexical graph written to the
    real Neo4j, searched by the mapped backend and by neo4j-graphrag's ``VectorCypherRetriever`` (needs the
    dev extra); both return chunks for every query, and the graph and its indexes are dropped. No timing
    is checked."""
    from benchmarks import mapped_latency
    from tests.integration.servers import server_settings

    settings = server_settings()  # fails, as the integration tests do, without the servers

    assert mapped_latency.main(["--smoke", "--out", str(tmp_path)]) == 0

    data = json.loads((tmp_path / "mapped_latency.json").read_text(encoding="utf-8"))
    [row] = data["rows"]
    assert (row["chunks"], row["searches"]) == (50, 5)
    for system in ("mapped", "peer"):
        assert row[system]["min_results"] > 0  # every query found chunks (the run also refuses otherwise)
    assert row["top_k_overlap"] > 0  # the two find the same chunks, mostly
    assert "| 50 |" in (tmp_path / "mapped_latency.md").read_text(encoding="utf-8")
    names = mapped_latency.Names(row["run"])
    auth = (settings.neo4j_user, settings.neo4j_password)
    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=auth, notifications_min_severity="OFF") as driver:
        left = [
            driver.execute_query(
                f"MATCH (n:`{label}`) RETURN count(n) AS nodes", database_=settings.neo4j_database
            ).records[0]["nodes"]
            for label in (names.chunk, names.document)
        ]
        indexes = driver.execute_query(
            "SHOW INDEXES YIELD name WHERE name ENDS WITH $run RETURN count(*) AS indexes",
            run=names.run,
            database_=settings.neo4j_database,
        ).records[0]["indexes"]
    assert (left, indexes) == ([0, 0], 0)


def test_the_overhead_benchmarks_uninstrumented_searches_record_no_metric(
    example_services: SearchServices,
) -> None:
    """Inside ``uninstrumented()`` a search moves none of the run, step and backend-read metrics and
    returns the same pack; outside it, each of them moves."""
    graph = build_graph(example_services)
    request: Any = {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}

    samples: tuple[tuple[str, dict[str, str]], ...] = (
        ("brain_graph_search_seconds_count", {}),
        ("brain_graph_searches_total", {"outcome": "ok"}),
        ("brain_graph_step_seconds_count", {"step": "retrieve", "backend": "embedded", "outcome": "ok"}),
        ("brain_graph_backend_call_seconds_count", {"backend": "embedded", "operation": "seeds", "outcome": "ok"}),
    )

    def counts() -> tuple[float, ...]:
        return tuple(REGISTRY.get_sample_value(name, labels) or 0.0 for name, labels in samples)

    before = counts()
    with observability_overhead.uninstrumented():
        quiet = graph.invoke(request)
    assert counts() == before
    measured = graph.invoke(request)
    assert all(after > earlier for after, earlier in zip(counts(), before, strict=True))
    assert json.dumps(quiet, sort_keys=True) == json.dumps(measured, sort_keys=True)
