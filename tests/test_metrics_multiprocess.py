"""prometheus_client's multiprocess mode: with ``PROMETHEUS_MULTIPROC_DIR`` set, ``/brain/metrics``
(:func:`~brain_graph.observability.metrics.exposition`) adds up the searches of every process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from brain_graph.indexing.dataset import Dataset
from brain_graph.observability.metrics import MULTIPROCESS_DIR_VARIABLE, exposition
from tests.helpers import make_store

SEARCH = textwrap.dedent(
    """
    import sys
    from brain_graph.graphs.search import build_graph
    from brain_graph.pipeline.services import SearchServices
    from brain_graph.stores.embedded import EmbeddedStore
    graph = build_graph(SearchServices(backend=EmbeddedStore(sys.argv[1])))
    graph.invoke({"queryText": "token refresh", "filter": {"tenantId": "acme", "secured": False}})
    try:
        graph.invoke({"queryText": "token refresh", "filter": {"tenantId": "acme"}, "options": {"topK": 5000}})
    except Exception:
        pass
    """
)


def test_the_metrics_of_every_process_are_added_up(
    tmp_path: Path, example_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_store(tmp_path, example_dataset).backend.close()
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {**os.environ, MULTIPROCESS_DIR_VARIABLE: str(directory)}
    for _ in range(2):
        subprocess.run(
            [sys.executable, "-c", SEARCH, str(tmp_path / "store.sqlite3")], env=env, check=True, timeout=120
        )
    assert len(list(directory.glob("*.db"))) >= 2  # each process wrote its own files

    monkeypatch.setenv(MULTIPROCESS_DIR_VARIABLE, str(directory))
    body, _ = exposition()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }
    assert samples[("brain_graph_searches_total", (("outcome", "ok"),))] == 2
    assert samples[("brain_graph_searches_total", (("outcome", "error"),))] == 2
    assert samples[("brain_graph_search_errors_total", (("code", "INVALID_REQUEST"),))] == 2
    assert samples[("brain_graph_search_seconds_count", ())] == 4
    retrieve = (("backend", "embedded"), ("outcome", "ok"), ("step", "retrieve"))
    assert samples[("brain_graph_step_seconds_count", retrieve)] == 2
