"""Tenant ids given to the indexer (``brain_index`` graph, ``brain-graph index``, :class:`Indexer`)
follow search's identifier rule: a malformed one is a typed one-line error naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.index import build_index_graph
from brain_graph.indexing.indexer import Indexer
from brain_graph.pipeline.services import SearchServices
from tests.helpers import vector_states

BAD_TENANTS = [
    ("t\ud800", r"U\+D800"),  # a lone surrogate: not valid UTF-8
    ("t\x00a", r"U\+0000"),
    ("t1 ", "white space"),
    ("", "blank"),
    ("   ", "blank"),
    ("t" * 129, "at most 128 characters"),
    ("t\u200b1", r"U\+200B"),
]


@pytest.mark.parametrize(("tenant", "problem"), BAD_TENANTS)
def test_the_index_graph_refuses_a_malformed_tenant(small_services: SearchServices, tenant: str, problem: str) -> None:
    before = vector_states(small_services)
    with pytest.raises(InvalidRequestError, match=rf"^invalid request: tenants\.1: .*{problem}") as raised:
        build_index_graph(small_services).invoke({"tenants": ["t1", tenant], "full": True})
    assert "\n" not in str(raised.value)
    assert vector_states(small_services) == before  # nothing re-embedded


@pytest.mark.parametrize(("tenant", "problem"), BAD_TENANTS)
def test_the_indexer_refuses_a_malformed_tenant(small_services: SearchServices, tenant: str, problem: str) -> None:
    with pytest.raises(InvalidRequestError, match=rf"tenants\.0: .*{problem}"):
        Indexer(small_services.backend, small_services.profiles).run([tenant])


@pytest.mark.parametrize(
    ("tenants", "profiles", "message"),
    [
        ("t1", None, r"tenants: must be a list of ids, not a single str"),  # not tenants "t" and "1"
        ([5], None, r"tenants\.0: must be a string \(got int\)"),
        (None, "cdm.doc.body", r"profiles: must be a list of ids, not a single str"),
    ],
)
def test_the_indexer_refuses_a_string_where_a_list_is_expected(
    small_services: SearchServices, tenants: Any, profiles: Any, message: str
) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        Indexer(small_services.backend, small_services.profiles).plan(tenants, profiles)


def test_a_valid_tenant_without_data_is_still_a_success(small_services: SearchServices) -> None:
    report = build_index_graph(small_services).invoke({"tenants": ["nobody"]})["report"]
    assert (report["tenants"], report["embedded"]) == (["nobody"], 0)


def test_the_cli_reports_a_malformed_tenant_in_one_line(tmp_path: Path, small_services: SearchServices) -> None:
    store = tmp_path / "store.sqlite3"
    result = CliRunner().invoke(app, ["index", "--store", str(store), "--tenant", "t1 "])
    assert result.exit_code == 2
    assert result.stderr == "error: invalid request: --tenant: must not start or end with white space (got 't1 ')\n"


def test_the_installed_command_reports_a_non_utf8_tenant_in_one_line(
    tmp_path: Path, small_services: SearchServices
) -> None:
    store = tmp_path / "store.sqlite3"
    command: list[str | bytes] = [sys.executable, "-m", "brain_graph.cli.main", "index", "--store", str(store)]
    completed = subprocess.run([*command, "--tenant", b"\xff", "--json"], capture_output=True, check=False)
    stderr = completed.stderr.decode("utf-8")
    assert completed.returncode == 2, stderr
    assert stderr.startswith("error: invalid request: --tenant: ")
    assert "U+DCFF" in stderr
    assert stderr.count("\n") == 1
    assert "Traceback" not in stderr
    assert completed.stdout == b""


def test_a_plan_for_named_tenants_does_not_list_the_stores_tenants(
    small_services: SearchServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listing every tenant reads the store's whole node index; a run for named tenants needs none of it."""
    store_class = type(small_services.backend.index_store)
    every = small_services.backend.index_store.tenants()
    assert len(every) >= 2
    listed: list[int] = []
    original = store_class.tenants

    def counted(self: Any) -> list[str]:
        listed.append(1)
        return original(self)

    monkeypatch.setattr(store_class, "tenants", counted)
    indexer = Indexer(small_services.backend, small_services.profiles)
    assert indexer.plan([every[-1]]).tenants == (every[-1],)
    assert listed == []
    assert indexer.plan().tenants == tuple(every)
    assert listed == [1]
