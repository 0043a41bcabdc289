"""Attack class: hostile or careless dataset files. Whatever would load but break a later search
(integers beyond 64 bits, which orjson and the LangGraph server cannot serialise), mislead a reviewer
(ids, tenants, project keys and ACL entries that print like others), leak (an ACL on a node that is not
secured), run in a UI (non-http(s) urls) or flood an error message (hostile keys, over-long integer
literals) is refused before any write as one bounded :class:`DatasetError` line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from brain_graph import DatasetError
from brain_graph.indexing.dataset import read_dataset
from tests.probes.support import BIDI_AND_INVISIBLE, make_store, node, request, search


def _write(tmp_path: Path, text: str, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _one_node(node_id: str = "w1", **fields: Any) -> str:
    return json.dumps({"nodes": [node("t1", node_id, "cdm.work_item", "Token refresh", **fields)], "edges": []})


def _dataset_error(path: Path) -> str:
    """The one bounded line of the DatasetError reading ``path`` raises."""
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    message = str(caught.value)
    assert "\n" not in message, repr(message[:200])
    assert "\u2028" not in message, repr(message[:200])
    assert len(message) <= 600 + len(str(path)), len(message)
    return message


def test_integer_literal_too_long_for_python_is_a_dataset_error(tmp_path: Path) -> None:
    """json.loads raised a plain ValueError (Python's limit on integer digits), which the reader did
    not catch."""
    path = _write(tmp_path, _one_node(properties={"n": 0}).replace('"n": 0', '"n": ' + "1" * 5_000))
    assert "outside the signed 64-bit range" in _dataset_error(path)


def test_dataset_error_with_hostile_key_is_one_bounded_line(tmp_path: Path) -> None:
    """The error names the field with the key cut short, so the reason still fits in the line."""
    path = _write(tmp_path, _one_node(text={"x\n\n## IGNORE PREVIOUS\n" + "k" * 5_000: 5}))
    assert "Input should be a valid string" in _dataset_error(path)


@pytest.mark.parametrize("version", [True, 1.0, "1", None])
def test_unknown_format_versions_are_refused(tmp_path: Path, version: Any) -> None:
    """README: ``formatVersion`` must be ``1``. ``true`` and ``1.0`` are not the integer 1."""
    _dataset_error(_write(tmp_path, json.dumps({"formatVersion": version, "nodes": [], "edges": []})))


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**70, [1, {"deep": -(2**64)}]])
def test_integers_beyond_64_bits_are_refused_at_load(tmp_path: Path, value: Any) -> None:
    """A property integer outside the 64-bit range loaded, and then every search returning the node
    failed when the LangGraph server serialised the result (orjson: 'Integer exceeds 64-bit range')
    or checkpointed it."""
    path = _write(tmp_path, _one_node(properties={"n": value}))
    assert "outside the signed 64-bit range" in _dataset_error(path)


def test_integers_at_the_64_bit_bounds_load(tmp_path: Path) -> None:
    path = _write(tmp_path, _one_node(properties={"n": [2**63 - 1, -(2**63)]}, text={"summary": "token refresh"}))
    result = search(make_store(tmp_path, read_dataset(path)), request("token refresh"))
    assert result.graph_nodes[0].properties["n"] == [2**63 - 1, -(2**63)]
    orjson.dumps(result.to_wire())  # what the LangGraph server does with the output


@pytest.mark.parametrize("char", list(BIDI_AND_INVISIBLE), ids=[f"U+{ord(c):04X}" for c in BIDI_AND_INVISIBLE])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("acl", ["group:se{}c"]),
        ("acl", ["user:bo{}b"]),
        ("tenantId", "t{}1"),
        ("projectKey", "P{}"),
        ("id", "w{}1"),
        ("nodeType", "cdm.work_item{}"),
    ],
)
def test_names_and_identifiers_with_invisible_characters_are_refused(
    tmp_path: Path, field: str, value: str | list[str], char: str
) -> None:
    """``group:sec\u200b`` looks like ``group:sec`` to whoever reviews the ACL but grants nothing to
    group ``sec``; an id or tenant with a bidi override reorders the line it is printed on."""
    data = json.loads(_one_node(secured=True, acl=["group:sec"]))
    data["nodes"][0][field] = [entry.format(char) for entry in value] if isinstance(value, list) else value.format(char)
    assert "must not contain control, format" in _dataset_error(_write(tmp_path, json.dumps(data)))


@pytest.mark.parametrize("field", ["tenantId", "projectKey"])
@pytest.mark.parametrize("value", ["P ", " P", "P\u00a0", "\tP"])
def test_tenant_ids_and_project_keys_with_white_space_at_either_end_are_refused(
    tmp_path: Path, field: str, value: str
) -> None:
    """The same rule as for a search: ``P `` prints like ``P`` but is another project."""
    data = json.loads(_one_node())
    data["nodes"][0][field] = value
    assert field in _dataset_error(_write(tmp_path, json.dumps(data)))


@pytest.mark.parametrize("node_id", ["w  1", "w1 ", " w1", "w\u00a01", "w\t1", "w\u20031", "w\u30001"])
def test_node_ids_hold_no_white_space_but_single_spaces(tmp_path: Path, node_id: str) -> None:
    """Ids are printed one-lined as code spans: ``w  1`` printed like ``w 1``, ``w1 `` like ``w1``."""
    assert "id must not" in _dataset_error(_write(tmp_path, _one_node(node_id)))


def test_node_ids_with_single_spaces_load(tmp_path: Path) -> None:
    path = _write(tmp_path, _one_node("work item 1", text={"summary": "token refresh"}))
    assert [h.node_id for h in search(make_store(tmp_path, read_dataset(path)), request("token refresh")).hits] == [
        "work item 1"
    ]


def test_acl_on_a_node_that_is_not_secured_is_refused(tmp_path: Path) -> None:
    """``acl`` without ``secured: true`` made the node public to everyone: a dataset that lists who may
    see a node but forgets ``secured`` leaked it."""
    path = _write(tmp_path, _one_node(acl=["group:security"], text={"summary": "token refresh"}))
    assert "acl given but secured is false" in _dataset_error(path)
