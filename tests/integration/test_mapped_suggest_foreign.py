"""``brain-graph attach --suggest`` on a foreign schema, made to work by editing ONLY the lines it marked
``# guessed:``, then checked (``attach --check``) and searched through the CLI, on the real servers.

The team's graph is written here with plain Cypher, its vectors with the official Weaviate client
(names unique to the run, deleted at the end), in two shapes:

1. other label, property and relationship names than brain-graph's (``Ticket_*``, ``Wiki_*``,
   ``Topic_*`` clusters joined by ``BELONGS_TO``, ``MENTIONS``/``LINKS_TO`` relationships; ids in
   ``key``, the tenant in ``tenant_id``, access control in ``isPrivate``/``allowedPrincipals``),
   two tenants that share some ids and hold look-alike texts, a secured node, relationships across
   the tenants; Weaviate collections named like the labels WITHOUT native multi-tenancy (the tenant
   in an object property) and with TWO named vectors each (one holds the vectors of other texts);
2. the same with Weaviate's native multi-tenancy (one collection's Weaviate tenants are the graph's
   tenant ids, the other's are ``ws_<tenant id>``).

What the team knows of its own data (``truth``) is compared with the suggestion key by key; a value
that differs is edited, and only on a line marked as guessed (anything else fails the test: the
suggestion would not be usable as the issue requires). Then the check exits 0, and searches for each
tenant find the right nodes, never the other tenant's, and the secured node only for a principal its
ACL names. Nothing is written to either server (their state is compared before and after).
"""

from __future__ import annotations

import json
import re
import tomllib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import pytest
import weaviate
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.tenants import Tenant

from brain_graph.core.edges import DEFAULT_SAFE_EDGE_TYPES
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.mapping import read_mapping
from tests.integration.servers import brain_graph_cli, team_driver, team_weaviate

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
EMBEDDER = LexicalHashEmbeddings()  # what the CLI embeds queries with by default
ACME, GLOBEX = f"acme-{RUN}", f"globex-{RUN}"
TENANTS = (ACME, GLOBEX)
GUESSED = "# guessed:"
WORK, DOC = "cdm.work.summary", "cdm.doc.body"


@dataclass(frozen=True)
class Node:
    """A node of the team's graph: ``kind`` ticket, wiki or topic; ``acl`` set: secured, readable by
    these entries."""

    tenant: str
    kind: str
    key: str
    title: str
    text: str
    topic: str | None = None
    acl: tuple[str, ...] | None = None

    @property
    def vector_text(self) -> str:
        return f"{self.title}\n{self.text}"


NODES = (
    # acme
    Node(ACME, "topic", "TOP-1", "Payments", "Card payments, retries and checkout incidents."),
    Node(ACME, "topic", "TOP-2", "Authentication", "Logins, sessions, password resets and credentials."),
    Node(
        ACME,
        "ticket",
        "TCK-1",
        "Checkout fails on card charge timeout",
        "Card charges time out at checkout under peak load; the payment gateway answers after thirty seconds.",
        "TOP-1",
    ),
    Node(
        ACME,
        "ticket",
        "TCK-2",
        "Password reset email delayed",
        "Reset emails arrive hours late because the outbound mail queue is backed up.",
        "TOP-2",
    ),
    Node(
        ACME,
        "wiki",
        "WIKI-1",
        "Payment retry policy",
        "The payment service retries failed card charges with exponential backoff and jitter.",
        "TOP-1",
    ),
    Node(
        ACME,
        "wiki",
        "WIKI-2",
        "Session lifetime",
        "Session cookies expire after thirty minutes of inactivity on every device.",
        "TOP-2",
    ),
    Node(
        ACME,
        "wiki",
        "WIKI-3",
        "Leaked credentials response",
        "Rotate the leaked database credentials and revoke the compromised signing keys within one hour.",
        "TOP-2",
        acl=("user:alice", "group:security"),
    ),
    # globex: some of acme's ids, texts like acme's (a search that crossed tenants would find them)
    Node(GLOBEX, "topic", "TOP-1", "Logistics", "Warehouses, scanners and forklifts."),
    Node(GLOBEX, "topic", "TOP-3", "Billing", "Kiosk payments and billing workers."),
    Node(
        GLOBEX,
        "ticket",
        "TCK-1",
        "Scanner firmware crash",
        "Handheld barcode scanners crash after the firmware update when reading damaged labels.",
        "TOP-1",
    ),
    Node(
        GLOBEX,
        "ticket",
        "TCK-5",
        "Kiosk checkout card charge timeout",
        "Kiosk card charges time out at checkout during the evening peak load.",
        "TOP-3",
    ),
    Node(
        GLOBEX,
        "wiki",
        "WIKI-1",
        "Forklift safety checklist",
        "Forklift drivers inspect brakes, horn and mast chains before every shift.",
        "TOP-1",
    ),
    Node(
        GLOBEX,
        "wiki",
        "WIKI-3",
        "Card retry backoff",
        "Card payments are retried with exponential backoff and jitter by the billing worker.",
        "TOP-3",
    ),
    Node(
        GLOBEX,
        "wiki",
        "WIKI-7",
        "Credential rotation runbook",
        "Rotate leaked database credentials and revoke compromised signing keys at once.",
        "TOP-3",
    ),
)
LINKS = (  # (tenant, key) -[type]-> (tenant, key); two cross the tenants
    ((ACME, "TCK-1"), "MENTIONS", (ACME, "WIKI-1")),
    ((ACME, "TCK-2"), "MENTIONS", (ACME, "WIKI-3")),
    ((ACME, "WIKI-1"), "LINKS_TO", (ACME, "WIKI-2")),
    ((GLOBEX, "TCK-5"), "MENTIONS", (GLOBEX, "WIKI-3")),
    ((ACME, "TCK-1"), "MENTIONS", (GLOBEX, "WIKI-7")),
    ((GLOBEX, "TCK-1"), "MENTIONS", (ACME, "WIKI-2")),
)
MEMBERSHIP = "BELONGS_TO"


@dataclass(frozen=True)
class Layout:
    """A Weaviate collection of one kind of node: the property naming the node, the one holding the
    tenant (shape 1), the named vector holding the node's vector and the one holding another node's,
    and (shape 2) the Weaviate tenant of a brain-graph tenant."""

    id_property: str
    tenant_property: str
    tokenization: Tokenization | None  # of the tenant property (None: Weaviate's default, word)
    vector: str
    decoy: str
    tenant_name: str  # with {tenant}


LAYOUTS = {
    "ticket": Layout(
        "nodeKey", "tenantId", Tokenization.FIELD, vector="content", decoy="title", tenant_name="{tenant}"
    ),
    "wiki": Layout("key", "tenant_id", None, vector="passage", decoy="headline", tenant_name="ws_{tenant}"),
}
PROFILE_OF = {"ticket": WORK, "wiki": DOC}


@dataclass(frozen=True)
class Shape:
    number: int
    native: bool  # Weaviate's native multi-tenancy

    @property
    def suffix(self) -> str:
        return f"{RUN}_{self.number}"

    @property
    def pattern(self) -> str:
        return f"*_{self.suffix}"

    def label(self, kind: str) -> str:
        return {"ticket": "Ticket", "wiki": "Wiki", "topic": "Topic"}[kind] + f"_{self.suffix}"

    def collection(self, kind: str) -> str:
        return self.label(kind)  # named like the label, so the suggestion finds it

    def truth(self) -> dict[str, Any]:
        """What the team knows of its data, by the mapping keys the suggestion names its lines by."""
        found: dict[str, Any] = {
            "id_property": "key",
            "tenant": {"property": "tenant_id"},
            "secured_property": "isPrivate",
            "acl_property": "allowedPrincipals",
            f"nodes.{self.label('ticket')}.node_type": "cdm.work_item",
            f"nodes.{self.label('wiki')}.node_type": "cdm.doc",
            "clusters.label": self.label("topic"),
            "clusters.membership": MEMBERSHIP,
        }
        for kind, layout in LAYOUTS.items():
            key = f"vectors.{PROFILE_OF[kind]}"
            found[f"{key}.source"] = "weaviate"
            found[f"{key}.collection"] = self.collection(kind)
            found[f"{key}.id_property"] = layout.id_property
            found[f"{key}.vector"] = layout.vector
            found[f"{key}.embedder"] = EMBEDDER.name
            if self.native:
                found[f"{key}.tenant_name"] = layout.tenant_name
            else:
                found[f"{key}.tenant_property"] = layout.tenant_property
        return found


SHAPES = {1: Shape(1, native=False), 2: Shape(2, native=True)}


def embed(text: str) -> list[float]:
    return [float(x) for x in EMBEDDER.embed_query(text)]


# -- the team's data ------------------------------------------------------------------------------------


def write_graph(driver: neo4j.Driver, shape: Shape) -> None:
    for kind in ("ticket", "wiki", "topic"):
        label = shape.label(kind)
        rows = []
        for node in NODES:
            if node.kind != kind:
                continue
            row: dict[str, Any] = {"key": node.key, "tenant_id": node.tenant, "content": node.text}
            row["title" if kind == "ticket" else "name"] = node.title
            if kind == "topic":
                row["description"] = row.pop("content")
            else:
                row["isPrivate"] = node.acl is not None
            if node.acl is not None:
                row["allowedPrincipals"] = list(node.acl)
            rows.append(row)
        driver.execute_query(f"CREATE INDEX `key_{label}` IF NOT EXISTS FOR (n:`{label}`) ON (n.key)")
        driver.execute_query(f"UNWIND $rows AS row CREATE (n:`{label}`) SET n = row", rows=rows)
    driver.execute_query("CALL db.awaitIndexes(300)")
    label_of = {(node.tenant, node.key): shape.label(node.kind) for node in NODES}
    members = [((node.tenant, node.key), MEMBERSHIP, (node.tenant, node.topic)) for node in NODES if node.topic]
    for (a_tenant, a_key), rel, (b_tenant, b_key) in [*LINKS, *members]:
        driver.execute_query(
            f"MATCH (a:`{label_of[(a_tenant, a_key)]}` {{key: $a, tenant_id: $at}}), "
            f"(b:`{label_of[(b_tenant, b_key)]}` {{key: $b, tenant_id: $bt}}) CREATE (a)-[:`{rel}`]->(b)",
            a=a_key,
            at=a_tenant,
            b=b_key,
            bt=b_tenant,
        )


def write_collections(client: weaviate.WeaviateClient, shape: Shape) -> None:
    """Per kind a collection with two named vectors: the node's own (``layout.vector``) and, in the
    other, the vector of the next node of its tenant (a suggestion searching it finds wrong nodes)."""
    flat = Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)  # exact: a known order
    for kind, layout in LAYOUTS.items():
        properties = [Property(name=layout.id_property, data_type=DataType.TEXT, tokenization=Tokenization.FIELD)]
        if not shape.native:
            properties.append(
                Property(name=layout.tenant_property, data_type=DataType.TEXT, tokenization=layout.tokenization)
            )
        name = shape.collection(kind)
        client.collections.create(
            name,
            properties=properties,
            vector_config=[
                Configure.Vectors.self_provided(name=layout.vector, vector_index_config=flat),
                Configure.Vectors.self_provided(name=layout.decoy, vector_index_config=flat),
            ],
            # a write through a Weaviate tenant that does not exist would create it, and show
            multi_tenancy_config=Configure.multi_tenancy(enabled=True, auto_tenant_creation=True)
            if shape.native
            else None,
        )
        collection = client.collections.use(name)
        if shape.native:
            collection.tenants.create([Tenant(name=layout.tenant_name.format(tenant=t)) for t in TENANTS])
        for tenant in TENANTS:
            nodes = [node for node in NODES if node.kind == kind and node.tenant == tenant]
            target = collection.with_tenant(layout.tenant_name.format(tenant=tenant)) if shape.native else collection
            for i, node in enumerate(nodes):
                other = nodes[(i + 1) % len(nodes)]
                props = {layout.id_property: node.key} | ({} if shape.native else {layout.tenant_property: tenant})
                vectors = {layout.vector: embed(node.vector_text), layout.decoy: embed(other.vector_text)}
                target.data.insert(props, vector=vectors)


def state(driver: neo4j.Driver, client: weaviate.WeaviateClient, shape: Shape) -> dict[str, Any]:
    """What attach and search must leave as they were: the shape's nodes (labels and properties), their
    relationships, the labels, indexes and constraints of the run, nodes of any label holding one of
    the run's tenants, and the run's collections (config, Weaviate tenants, object counts)."""
    ours = "any(l IN labels(n) WHERE l ENDS WITH $suffix)"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN labels(n) AS labels, properties(n) AS props", suffix=shape.suffix
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]-(m) WHERE {ours} RETURN labels(n) AS a, n.key AS ak, type(r) AS t, "
        "startNode(r) = n AS out, labels(m) AS b, m.key AS bk, properties(r) AS props",
        suffix=shape.suffix,
    ).records
    labels = driver.execute_query(
        "CALL db.labels() YIELD label WHERE label CONTAINS $run RETURN label ORDER BY label", run=RUN
    ).records
    indexes = driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state WHERE name CONTAINS $run "
        "OR any(l IN coalesce(labelsOrTypes, []) WHERE l CONTAINS $run) "
        "RETURN name, type, labelsOrTypes, properties, state ORDER BY name",
        run=RUN,
    ).records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes WHERE name CONTAINS $run "
        "OR any(l IN coalesce(labelsOrTypes, []) WHERE l CONTAINS $run) RETURN name ORDER BY name",
        run=RUN,
    ).records
    tenanted = driver.execute_query(
        "MATCH (n) WHERE any(k IN keys(n) WHERE n[k] IN $tenants) RETURN labels(n) AS labels, count(*) AS c",
        tenants=list(TENANTS),
    ).records
    collections: dict[str, Any] = {}
    for name in sorted(n for n in client.collections.list_all(simple=True) if RUN in n):
        collection = client.collections.use(name)
        config = collection.config.get()
        found: dict[str, Any] = {"config": config.to_dict()}
        if config.multi_tenancy_config.enabled:
            held = collection.tenants.get()
            found["tenants"] = {t: str(held[t].activity_status) for t in sorted(held)}
            found["counts"] = {
                t: collection.with_tenant(t).aggregate.over_all(total_count=True).total_count for t in sorted(held)
            }
        else:
            found["counts"] = collection.aggregate.over_all(total_count=True).total_count
        collections[name] = found
    return {
        "nodes": sorted(json.dumps([sorted(r["labels"]), r["props"]], sort_keys=True) for r in nodes),
        "relationships": sorted(json.dumps(list(r), sort_keys=True) for r in rels),
        "labels": [r["label"] for r in labels],
        "indexes": [json.dumps(list(r)) for r in indexes],
        "constraints": [r["name"] for r in constraints],
        "tenanted": sorted(json.dumps([sorted(r["labels"]), r["c"]]) for r in tenanted),
        "collections": collections,
    }


@dataclass(frozen=True)
class Team:
    shape: Shape
    driver: neo4j.Driver
    client: weaviate.WeaviateClient
    before: dict[str, Any]

    def unchanged(self) -> None:
        assert state(self.driver, self.client, self.shape) == self.before


@pytest.fixture(scope="module", params=sorted(SHAPES), ids=lambda n: f"shape{n}")
def team(request: pytest.FixtureRequest) -> Iterator[Team]:
    shape = SHAPES[request.param]
    driver = team_driver()
    client = team_weaviate()
    try:
        write_graph(driver, shape)
        write_collections(client, shape)
        before = state(driver, client, shape)
        assert len(before["nodes"]) == len(NODES)
        assert set(before["collections"]) == {shape.collection(kind) for kind in LAYOUTS}
        yield Team(shape, driver, client, before)
    finally:
        try:
            for kind in LAYOUTS:
                client.collections.delete(shape.collection(kind))
            for kind in ("ticket", "wiki", "topic"):
                label = shape.label(kind)
                driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
                driver.execute_query(f"DROP INDEX `key_{label}` IF EXISTS")
        finally:
            client.close()
            driver.close()


# -- editing the suggestion, only where it says it guessed -------------------------------------------------

HEADER = re.compile(r"^\[\[?([A-Za-z_]+)\]\]?$")
BLOCK_KEY = {"nodes": "label", "edges": "type", "vectors": "profile"}  # the first line of each block


def keyed_lines(text: str) -> dict[str, int]:
    """The line index of each mapping key of a suggested mapping, named as the suggestion names its
    guesses: ``tenant``, ``nodes.<label>.node_type``, ``clusters.membership``, ``vectors.<profile>.vector``."""
    found: dict[str, int] = {}
    section: str | None = None
    block: Any = None
    for index, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        header = HEADER.match(stripped)
        if header:
            section, block = header.group(1), None
            continue
        ((name, value),) = tomllib.loads(line).items()
        if section in BLOCK_KEY and name == BLOCK_KEY[section]:
            block = value
        key = name if section is None else f"clusters.{name}" if section == "clusters" else f"{section}.{block}.{name}"
        assert key not in found, f"two lines for {key}"
        found[key] = index
    return found


def value_of(text: str, key: str) -> Any:
    index = keyed_lines(text)[key]
    ((_, value),) = tomllib.loads(text.splitlines()[index]).items()
    return value


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def edit_guessed(text: str, key: str, value: Any) -> str:
    """``text`` with the value on the line of ``key`` replaced by ``value``; fails the test when the
    suggestion has no line for ``key`` or did not mark it as guessed."""
    index = keyed_lines(text).get(key)
    if index is None:
        pytest.fail(f"the suggestion has no line for {key}: it needs {value!r}, and only guessed lines may be edited")
    lines = text.splitlines()
    line = lines[index]
    if GUESSED not in line:
        pytest.fail(f"{key} must be {value!r}, but its line is not marked as guessed: {line!r}")
    name = line.split("=", 1)[0].strip()
    lines[index] = f"{name} = {toml_value(value)}  {line[line.index(GUESSED) :]}"
    return "\n".join(lines) + "\n"


def corrected(text: str, truth: dict[str, Any]) -> tuple[str, list[str]]:
    """The suggestion with every value that differs from ``truth`` edited (:func:`edit_guessed`), and
    the keys edited."""
    edited = []
    for key, want in truth.items():
        if key not in keyed_lines(text):
            pytest.fail(f"the suggestion has no line for {key} (the team's value: {want!r})")
        if value_of(text, key) != want:
            text = edit_guessed(text, key, want)
            edited.append(key)
    return text, edited


@dataclass(frozen=True)
class Suggested:
    text: str  # as attach --suggest wrote it
    edited: list[str]  # the keys whose guessed lines were edited
    path: Path  # the edited mapping

    @property
    def safe_edge_types(self) -> str:
        """BRAIN_GRAPH_SAFE_EDGE_TYPES with the mapping's edge types added (so expansion follows them)."""
        mapping = read_mapping(self.path)
        return ",".join(sorted({*DEFAULT_SAFE_EDGE_TYPES, *(edge.as_type for edge in mapping.edges)}))


@pytest.fixture(scope="module")
def suggested(team: Team, tmp_path_factory: pytest.TempPathFactory) -> Suggested:
    """``attach --suggest --labels *_<run>_<shape> --out FILE``, then the guessed lines edited to the
    team's values."""
    folder = tmp_path_factory.mktemp(f"suggest{team.shape.number}")
    path = folder / "suggested.toml"
    done = brain_graph_cli("attach", "--suggest", "--labels", team.shape.pattern, "--out", str(path))
    assert done.returncode == 0, done.stderr
    assert f"wrote {path}" in done.stderr
    team.unchanged()
    text = path.read_text(encoding="utf-8")
    fixed, edited = corrected(text, team.shape.truth())
    out = folder / "team.toml"
    out.write_text(fixed, encoding="utf-8")
    return Suggested(text, edited, out)


# -- the edited suggestion ---------------------------------------------------------------------------------


def test_only_guessed_lines_were_edited(suggested: Suggested, team: Team) -> None:
    edited = suggested.path.read_text(encoding="utf-8")
    unguessed = [line for line in suggested.text.splitlines() if GUESSED not in line]
    assert [line for line in edited.splitlines() if GUESSED not in line] == unguessed
    assert len(edited.splitlines()) == len(suggested.text.splitlines())
    for key, want in team.shape.truth().items():
        assert value_of(edited, key) == want
    mapping = read_mapping(suggested.path)
    assert {node.label for node in mapping.nodes} == {team.shape.label("ticket"), team.shape.label("wiki")}
    assert mapping.clusters is not None
    assert {edge.type for edge in mapping.edges} == {"MENTIONS", "LINKS_TO"}


def test_the_weaviate_tenant_names_are_read_from_the_tenants_needing_no_edit(suggested: Suggested) -> None:
    # the wiki collection's Weaviate tenants are ws_<tenant>: the suggestion reads that rule from them
    assert not [key for key in suggested.edited if key.endswith(".tenant_name")]


def test_the_edit_refuses_a_line_not_marked_as_guessed(suggested: Suggested, team: Team) -> None:
    key = f"nodes.{team.shape.label('ticket')}.label"
    assert GUESSED not in suggested.text.splitlines()[keyed_lines(suggested.text)[key]]
    with pytest.raises(pytest.fail.Exception, match="not marked as guessed"):
        edit_guessed(suggested.text, key, "Other")
    with pytest.raises(pytest.fail.Exception, match="no line for"):
        edit_guessed(suggested.text, "url_property", "href")


def test_the_check_of_the_edited_suggestion_exits_0(suggested: Suggested, team: Team) -> None:
    done = brain_graph_cli(
        "attach", "--check", str(suggested.path), BRAIN_GRAPH_SAFE_EDGE_TYPES=suggested.safe_edge_types
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("error")], done.stderr
    out = done.stdout.splitlines()
    assert out[-1].startswith("mapping team: usable (0 error(s), "), done.stdout
    for kind in ("ticket", "wiki"):
        label = team.shape.label(kind)
        count = len([node for node in NODES if node.kind == kind])
        line = next(line for line in out if line.startswith(f"mapping team: nodes.{label}: "))
        assert f"{label} as " in line, line
        assert f"{count} nodes" in line, line
        assert ACME in line, line
        assert GLOBEX in line, line
    team.unchanged()


# -- searches through the edited suggestion ----------------------------------------------------------------


@dataclass(frozen=True)
class Search:
    """A search as ``principal`` (None: --public) with ``groups``, and the node of ``profile`` that must
    rank first (None: no expectation beyond what may not be seen)."""

    tenant: str
    query: str
    principal: str | None
    profile: str
    expected: str | None
    groups: tuple[str, ...] = ()

    def identities(self) -> set[str]:
        if self.principal is None:
            return set()
        return {f"user:{self.principal}", *(f"group:{group}" for group in self.groups)}

    def visible(self, node: Node) -> bool:
        return node.tenant == self.tenant and (node.acl is None or bool(self.identities() & set(node.acl)))


CREDENTIALS = "rotate leaked database credentials revoke compromised signing keys"
SEARCHES = {
    "acme-checkout": Search(ACME, "card charges time out at checkout under peak load", None, WORK, "TCK-1"),
    "acme-retries": Search(
        ACME, "payment service retries failed card charges with exponential backoff", None, DOC, "WIKI-1"
    ),
    "acme-reset": Search(ACME, "reset emails arrive late outbound mail queue", None, WORK, "TCK-2"),
    "acme-secured-alice": Search(ACME, CREDENTIALS, "alice", DOC, "WIKI-3"),
    "acme-secured-group": Search(ACME, CREDENTIALS, "carol", DOC, "WIKI-3", groups=("security",)),
    "acme-secured-bob": Search(ACME, CREDENTIALS, "bob", DOC, None, groups=("payments",)),
    "acme-secured-public": Search(ACME, CREDENTIALS, None, DOC, None),
    "globex-checkout": Search(GLOBEX, "card charges time out at checkout during peak load", None, WORK, "TCK-5"),
    "globex-scanners": Search(GLOBEX, "barcode scanners crash after the firmware update", None, WORK, "TCK-1"),
    "globex-credentials-alice": Search(GLOBEX, CREDENTIALS, "alice", DOC, "WIKI-7"),
    "globex-forklift": Search(GLOBEX, "forklift drivers inspect brakes before every shift", "bob", DOC, "WIKI-1"),
}


def node(tenant: str, key: str) -> Node:
    return next(n for n in NODES if n.tenant == tenant and n.key == key)


def run_search(suggested: Suggested, search: Search) -> dict[str, Any]:
    who = ["--public"] if search.principal is None else ["--principal", search.principal]
    for group in search.groups:
        who += ["--group", group]
    done = brain_graph_cli(
        "search",
        search.query,
        "--tenant",
        search.tenant,
        "--json",
        *who,
        BRAIN_GRAPH_MAPPING=str(suggested.path),
        BRAIN_GRAPH_SAFE_EDGE_TYPES=suggested.safe_edge_types,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def node_ids(value: Any) -> set[str]:
    """Every node id a result names (hits, graph nodes and edges, episodes, passages, candidates)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            if key.lower().endswith("nodeid") and isinstance(item, str):
                found.add(item)
            elif key.lower().endswith("nodeids") and isinstance(item, list):
                found.update(str(x) for x in item)
            else:
                found |= node_ids(item)
    elif isinstance(value, list):
        for item in value:
            found |= node_ids(item)
    return found


def unseen_texts(search: Search) -> list[str]:
    """The titles and texts of the nodes ``search`` may not see; each checked not to be part of a
    text it may see (or of the query), so that finding it in a result means a leak."""
    seen = [text for n in NODES if search.visible(n) for text in (n.title, n.text)] + [search.query]
    unseen = [text for n in NODES if not search.visible(n) for text in (n.title, n.text)]
    for text in unseen:
        assert not any(text in other for other in seen), text
    return unseen


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_a_search_finds_its_tenants_nodes_and_only_what_it_may_see(suggested: Suggested, team: Team, name: str) -> None:
    search = SEARCHES[name]
    result = run_search(suggested, search)
    dumped = json.dumps(result, ensure_ascii=False)
    visible = {n.key for n in NODES if search.visible(n)}
    assert result["hits"], f"no hits for {search.query!r}"
    assert node_ids(result) <= visible, f"{sorted(node_ids(result) - visible)} are not visible to {name}"
    leaked = [text for text in unseen_texts(search) if text in dumped]
    assert not leaked, f"{name} shows texts it may not see: {leaked}"
    if search.expected is not None:
        hits = [hit for hit in result["hits"] if hit["profileId"] == search.profile]
        assert hits, f"no {search.profile} hit for {search.query!r}: {result['hits']}"
        expected = node(search.tenant, search.expected)
        assert (hits[0]["nodeId"], hits[0]["title"]) == (expected.key, expected.title), hits
        passages = {p["sourceNodeId"]: p["text"] for p in result["passages"]}
        assert expected.text in passages.get(expected.key, ""), passages
    team.unchanged()


def edges_of(result: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(edge["edgeType"], edge["fromNodeId"], edge["toNodeId"]) for edge in result["graphEdges"]}


def test_expansion_follows_the_mapped_relationships_and_clusters_within_the_tenant(
    suggested: Suggested, team: Team
) -> None:
    result = run_search(suggested, SEARCHES["acme-checkout"])
    assert ("MENTIONS", "TCK-1", "WIKI-1") in edges_of(result)
    assert "WIKI-7" not in node_ids(result)  # TCK-1 mentions globex's WIKI-7 too
    episodes = {episode["clusterNodeId"]: episode["memberNodeIds"] for episode in result["episodes"]}
    assert "TCK-1" in episodes.get("TOP-1", []), result["episodes"]
    assert "Logistics" not in json.dumps(result)  # globex's TOP-1
    team.unchanged()


def test_the_secured_node_is_reached_by_expansion_only_by_a_principal_its_acl_names(
    suggested: Suggested, team: Team
) -> None:
    reset = SEARCHES["acme-reset"]
    alice = run_search(suggested, Search(ACME, reset.query, "alice", WORK, "TCK-2"))
    assert ("MENTIONS", "TCK-2", "WIKI-3") in edges_of(alice)
    assert "Leaked credentials response" in json.dumps(alice)
    for principal in ("bob", None):
        result = run_search(suggested, Search(ACME, reset.query, principal, WORK, "TCK-2"))
        assert result["hits"][0]["nodeId"] == "TCK-2"
        assert "WIKI-3" not in node_ids(result)
        assert "Leaked credentials response" not in json.dumps(result)
    team.unchanged()
