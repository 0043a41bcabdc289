"""The profiles file: the shipped one is today's three profiles over the contract's node types, a file
of one's own declares node types, passages and embedders (TOML or YAML alike), and every bad file is
one line naming the file and the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml

from brain_graph.core.contracts import NODE_TYPES_DOC, PROFILE_KINDS_DOC, filter_docs
from brain_graph.core.errors import ConfigurationError
from brain_graph.core.vocabulary import CODE_FILE, DOC, WORK_ITEM
from brain_graph.embedding.node_types import DEFAULT_NODE_TYPES, PassageField
from brain_graph.embedding.profiles import BASE_PROFILES, default_profiles, profiles_from_file
from brain_graph.embedding.profiles_file import (
    ProfilesFileError,
    default_profiles_file,
    default_profiles_path,
    parse_profiles,
    read_profiles_file,
)
from brain_graph.pipeline.config import Settings, profiles_from_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "node_types" / "profiles.toml"


def settings(**values: str) -> Settings:
    return Settings.model_validate({f"BRAIN_GRAPH_{key.upper()}": value for key, value in values.items()})


def test_the_shipped_file_is_the_three_profiles_over_the_contracts_node_types() -> None:
    assert BASE_PROFILES == (
        ("cdm.work.summary", "work", (WORK_ITEM,), ("title", "summary"), True),
        ("cdm.doc.body", "doc", (DOC,), ("title", "body"), True),
        ("code.file.summary", "code", (CODE_FILE,), ("title", "summary"), False),
    )
    registry = default_profiles()
    assert [(p.profile_id, p.max_chars, p.embedder_id, p.dimension) for p in registry.profiles] == [
        ("cdm.doc.body", 1000, "default", 512),
        ("cdm.work.summary", 1000, "default", 512),
        ("code.file.summary", 1000, "default", 512),
    ]
    assert dict(registry.node_types) == dict(DEFAULT_NODE_TYPES)
    assert registry.longest_passage_bound == 0  # every bound is the deployment's (SearchLimits)


def test_the_committed_graphql_descriptions_are_those_of_the_shipped_file() -> None:
    file = default_profiles_file()
    assert filter_docs(file.kinds(), file.default_kinds(), file.embedded_types()) == (PROFILE_KINDS_DOC, NODE_TYPES_DOC)


def test_a_file_of_ones_own_declares_types_passages_and_profiles() -> None:
    registry = profiles_from_file(read_profiles_file(EXAMPLE))
    assert [p.profile_id for p in registry.profiles] == ["concepts", "operations", "papers"]
    assert registry.get("operations").node_types == ("ticket", "runbook")
    assert registry.get("operations").max_chars == 2000
    assert registry.select(None) == (registry.get("concepts"), registry.get("operations"))
    assert registry.passage_fields("ticket") == (PassageField("summary"), PassageField("resolution", 300))
    assert registry.passage_fields("undeclared") == (PassageField("summary"),)
    assert registry.longest_passage_bound == 800
    assert registry.embedded_types == ("concept", "paper", "runbook", "ticket")


def test_yaml_reads_as_the_same_toml(tmp_path: Path) -> None:
    as_yaml = tmp_path / "profiles.yaml"
    as_yaml.write_text(yaml.safe_dump(tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))), encoding="utf-8")
    assert read_profiles_file(as_yaml) == read_profiles_file(EXAMPLE)


BASE = EXAMPLE.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('kind = "concept"\n', "", "profiles.concepts.kind: Field required"),
        (
            'kind = "concept"',
            'kindd = "concept"',
            "profiles.concepts.kindd: unknown key; the keys here are kind, nodeTypes",
        ),
        (
            'nodeTypes = ["concept"]',
            'nodeTypes = ["concpt"]',
            "profiles.concepts.nodeTypes[0]: 'concpt' is not a declared",
        ),
        (
            'textFields = ["title", "definition", "aliases"]',
            'textFields = ["title", "definiton"]',
            "profiles.concepts.textFields[1]: 'definiton' is a field of none of its node types",
        ),
        ('passage = ["abstract"]', 'passage = ["title"]', "nodeTypes.paper.passage[0].field: the title always"),
        ('passage = ["abstract"]', 'passage = ["abstrac"]', "nodeTypes.paper.passage[0].field: 'abstrac' is not one"),
        ('{ field = "definition", maxChars = 400 }', '{ field = "definition", maxChar = 400 }', "maxChar: unknown key"),
        ("maxChars = 2000", "maxChars = 0", "profiles.operations.maxChars: Input should be greater than or equal to 1"),
        ('kind = "ops"', 'kind = "Ops Team"', "profiles.operations.kind: String should match pattern"),
        ('kind = "ops"', 'kind = "ops"\nembedder = "gw"', "profiles.operations.embedder: unknown embedder 'gw'"),
        ('kind = "ops"', 'kind = "ops"\nembedder = "word2vec:x"', "profiles.operations.embedder: unknown embedder"),
        ("formatVersion = 1", "formatVersion = 2", "formatVersion: Input should be 1"),
        ("formatVersion = 1", "formatVersion = 1\nextra = true", "extra: unknown key; the keys here are formatVersion"),
        ("[profiles.papers]", "[profiles.papers", "not valid TOML"),
        (
            "formatVersion = 1",
            'formatVersion = 1\n[embedders.gw]\nprovider = "ollama:nomic-embed-text"',
            "embedders.gw.dimension: required",
        ),
        ("formatVersion = 1", '[embedders.Big]\nprovider = "lexical"', "embedders.Big: an embedder's name is"),
        ("formatVersion = 1", '[embedders.gw]\nprovider = "lexical:64"\ndimension = 32', "lexical:64 has dimension 64"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_key(old: str, new: str, expected: str) -> None:
    assert old in BASE
    with pytest.raises(ProfilesFileError) as caught:
        parse_profiles(BASE.replace(old, new, 1), "p.toml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("p.toml: ")
    assert expected in message


def test_a_misspelt_node_type_names_the_close_one() -> None:
    with pytest.raises(ProfilesFileError, match="did you mean 'concept'"):
        parse_profiles(BASE.replace('nodeTypes = ["concept"]', 'nodeTypes = ["concpt"]'), "p.toml")


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("p.json", "{}", "a profiles file is TOML (.toml) or YAML (.yaml, .yml)"),
        ("p.yaml", "- a list", "a profiles file is a table of nodeTypes, profiles and embedders (got list)"),
        ("p.yaml", "profiles: {a: [", "not valid YAML"),
        ("p.toml", "", "profiles: Field required"),
    ],
)
def test_files_that_are_not_profiles_files(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfilesFileError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        read_profiles_file(path)


def test_the_setting_names_the_variable_the_file_and_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "profiles.toml"
    bad.write_text(BASE.replace('kind = "ops"', 'kind = "ops"\ntextfields = []'), encoding="utf-8")
    with pytest.raises(ConfigurationError) as caught:
        profiles_from_settings(settings(profiles=str(bad)))
    assert str(caught.value) == (
        f"BRAIN_GRAPH_PROFILES: {bad}: profiles.operations.textfields: unknown key; the keys here are kind, "
        "nodeTypes, textFields, default, embedder, maxChars"
    )
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_PROFILES: .*missing\.toml: no such file$"):
        profiles_from_settings(settings(profiles=str(tmp_path / "missing.toml")))


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(BASE, encoding="utf-8")
    assert profiles_from_settings(settings(profiles=str(path))).get("papers").default is False
    path.write_text(BASE.replace("default = false", "default = true "), encoding="utf-8")
    assert profiles_from_settings(settings(profiles=str(path))).get("papers").default is True


def test_embedders_by_profile_by_name_and_by_override(tmp_path: Path) -> None:
    path = tmp_path / "profiles.toml"
    path.write_text(
        BASE.replace('kind = "paper"', 'kind = "paper"\nembedder = "lexical:64"')
        + '\n[embedders.small]\nprovider = "lexical:128"\n',
        encoding="utf-8",
    )
    registry = profiles_from_settings(settings(profiles=str(path)))
    assert {p.profile_id: p.dimension for p in registry.profiles} == {"concepts": 512, "operations": 512, "papers": 64}
    by_name = profiles_from_settings(settings(profiles=str(path), embedder="small"))
    assert {p.profile_id: p.dimension for p in by_name.profiles} == {"concepts": 128, "operations": 128, "papers": 64}
    overridden = profiles_from_settings(settings(profiles=str(path), profile_embedders="papers=lexical:32"))
    assert overridden.get("papers").dimension == 32
    assert overridden.embedder_name(overridden.get("papers")) == "lexical-hash-v1/32"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"profile_embedders": "cdm.doc.body=lexical"},
            "BRAIN_GRAPH_PROFILE_EMBEDDERS: comma-separated PROFILE=SPEC pairs with PROFILE one of concepts, "
            "operations, papers; 'cdm.doc.body=lexical' is not one",
        ),
        ({"embedder": "gateway"}, "BRAIN_GRAPH_EMBEDDER: unknown embedder 'gateway'"),
        (
            {"embedder": "ollama:nomic-embed-text"},
            "BRAIN_GRAPH_EMBEDDER: embedder ollama:nomic-embed-text: its dimension",
        ),
    ],
)
def test_embedder_settings_that_the_file_does_not_resolve(values: dict[str, str], expected: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        profiles_from_settings(settings(profiles=str(EXAMPLE), **values))
    assert str(caught.value).startswith(expected)
    assert "\n" not in str(caught.value)


def test_the_shipped_path_is_package_data() -> None:
    assert default_profiles_path().name == "default_profiles.toml"
    assert default_profiles_path().is_file()
