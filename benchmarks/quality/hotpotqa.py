"""The HotpotQA sample of HippoRAG as a brain-graph dataset, built without an LLM.

    python -m benchmarks.quality.hotpotqa [--out PATH]   # writes the dataset JSON (formatVersion 1)

Every paragraph of ``data/hotpotqa_train_corpus.json`` becomes a public ``cdm.doc`` node of tenant
``hotpotqa`` (title = paragraph title, ``text.body`` = paragraph text). Links come from title mentions:

- The *mention key* of a title is the title without a trailing disambiguation in parentheses
  (``Lilu (mythology)`` -> ``Lilu``), compared case-insensitively; titles may share a key (``Direct action``
  and ``Direct action (military)``, ``Flute Sonata (Prokofiev)`` and ``Flute sonata``), and a mention of it
  then links to each of them.
- Paragraph A ``REFERENCES`` paragraph B when A's text contains B's key as a whole word, ignoring case
  (A != B). The edge records the case-folded key as ``properties.mention``.
- Keys that cannot tell a reference from ordinary words are skipped: shorter than
  :data:`MIN_KEY_CHARS` characters, or found in more than :data:`MAX_MENTIONING_PARAGRAPHS` paragraphs
  (on this sample only ``United``, from ``United (Marian Gold album)``, found in 126).
- A key mentioned by at least :data:`MIN_CLUSTER_MENTIONS` other paragraphs gets a ``kg.cluster`` node
  (``clusterKind`` ``mention``, titled with the key as the first titled paragraph spells it); the titled
  paragraphs and the paragraphs that mention the key are its members (``IN_CLUSTER``, member -> cluster).

The output is deterministic: nodes sorted by id, edges by (type, from, to), as in ``examples/data``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA_DIR = HERE / "data"
QUESTIONS_FILE = DATA_DIR / "hotpotqa_train.json"
CORPUS_FILE = DATA_DIR / "hotpotqa_train_corpus.json"
DEFAULT_OUT = HERE / ".cache" / "hotpotqa_graph.json"

TENANT = "hotpotqa"
DOC = "cdm.doc"
CLUSTER = "kg.cluster"
REFERENCES = "REFERENCES"
IN_CLUSTER = "IN_CLUSTER"

MIN_KEY_CHARS = 4
MAX_MENTIONING_PARAGRAPHS = 25
MIN_CLUSTER_MENTIONS = 3

_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)$")


@dataclass(frozen=True)
class Question:
    """A HotpotQA question and the node ids of its supporting paragraphs."""

    question_id: str
    text: str
    answer: str
    kind: str
    level: str
    supporting: tuple[str, ...]


def load_corpus(path: Path = CORPUS_FILE) -> dict[str, str]:
    """Paragraph title -> paragraph text (the sentences joined as given; they carry their spaces)."""
    raw: dict[str, list[str]] = json.loads(path.read_text(encoding="utf-8"))
    return {title: "".join(sentences).strip() for title, sentences in sorted(raw.items())}


def slug(text: str) -> str:
    """ASCII, lower-case, dash-separated form of a title."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def _unique_ids(names: list[str], kind: str) -> dict[str, str]:
    """A stable node id per name: its slug, plus a short hash when two names share a slug."""
    slugs = {name: slug(name) for name in names}
    counts: dict[str, int] = defaultdict(int)
    for value in slugs.values():
        counts[value] += 1
    ids = {}
    for name, value in slugs.items():
        if not value or counts[value] > 1:
            value = f"{value}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}".lstrip("-")
        ids[name] = f"{TENANT}:{kind}:{value}"
    return ids


def doc_ids(titles: list[str]) -> dict[str, str]:
    """Paragraph title -> doc node id."""
    return _unique_ids(titles, "doc")


def mention_key(title: str) -> str:
    """The title without a trailing parenthesised disambiguation."""
    return _DISAMBIGUATION.sub("", title).strip()


def find_mentions(corpus: Mapping[str, str]) -> dict[str, list[str]]:
    """Usable mention key (case-folded) -> titles of the paragraphs that mention it (sorted), per the
    module's rules. A plain substring test on case-folded text screens paragraphs before the regex."""
    folded = {title: text.casefold() for title, text in corpus.items()}
    keys = sorted({mention_key(title).casefold() for title in corpus})
    mentions = {}
    for key in keys:
        if len(key) < MIN_KEY_CHARS:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(key)}(?!\w)", re.IGNORECASE)
        found = [title for title, text in folded.items() if key in text and pattern.search(text)]
        if 0 < len(found) <= MAX_MENTIONING_PARAGRAPHS:
            mentions[key] = found
    return mentions


def _node(node_id: str, node_type: str, title: str, text: dict[str, str], properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "tenantId": TENANT,
        "id": node_id,
        "nodeType": node_type,
        "projectKey": None,
        "title": title,
        "url": None,
        "secured": False,
        "acl": [],
        "text": text,
        "properties": properties,
    }


def _edge(edge_type: str, from_id: str, to_id: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "tenantId": TENANT,
        "edgeType": edge_type,
        "fromNodeId": from_id,
        "toNodeId": to_id,
        "properties": properties,
    }


def build_dataset(corpus: Mapping[str, str]) -> dict[str, Any]:
    """The dataset JSON object (formatVersion 1) for a corpus of paragraphs."""
    ids = doc_ids(sorted(corpus))
    titled: dict[str, list[str]] = defaultdict(list)
    for title in sorted(corpus):
        titled[mention_key(title).casefold()].append(title)
    mentions = find_mentions(corpus)
    cluster_ids = _unique_ids(sorted(mentions), "cluster")

    nodes = [_node(ids[title], DOC, title, {"body": text}, {}) for title, text in corpus.items()]
    edges = []
    for key, sources in mentions.items():
        targets = titled[key]
        edges += [
            _edge(REFERENCES, ids[source], ids[target], {"mention": key})
            for source in sources
            for target in targets
            if source != target
        ]
        mentioning = [source for source in sources if source not in targets]
        if len(mentioning) >= MIN_CLUSTER_MENTIONS:
            label = mention_key(targets[0])
            summary = f"Paragraphs that mention {label}, and the paragraph(s) titled {label}."
            nodes.append(_node(cluster_ids[key], CLUSTER, label, {"summary": summary}, {"clusterKind": "mention"}))
            members = sorted({*targets, *mentioning})
            edges += [_edge(IN_CLUSTER, ids[member], cluster_ids[key], {}) for member in members]
    nodes.sort(key=lambda node: node["id"])
    edges.sort(key=lambda edge: (edge["edgeType"], edge["fromNodeId"], edge["toNodeId"]))
    description = (
        f"HotpotQA sample of OSU-NLP-Group/HippoRAG ({len(corpus)} paragraphs, CC BY-SA 4.0, Yang et al. 2018) "
        "as docs linked by title mentions; see benchmarks/quality/hotpotqa.py for the rules."
    )
    return {"formatVersion": 1, "description": description, "nodes": nodes, "edges": edges}


def load_questions(ids: Mapping[str, str], path: Path = QUESTIONS_FILE) -> list[Question]:
    """The questions in file order, their supporting paragraphs as doc node ids (sorted)."""
    raw: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return [
        Question(
            question_id=item["_id"],
            text=item["question"],
            answer=item["answer"],
            kind=item["type"],
            level=item["level"],
            supporting=tuple(sorted({ids[title] for title, _sentence in item["supporting_facts"]})),
        )
        for item in raw
    ]


def dataset_json(dataset: Mapping[str, Any]) -> str:
    """The file form used by ``examples/data``: 2-space indent, UTF-8, final newline."""
    return json.dumps(dataset, indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Write the dataset file and print its counts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output file (default {DEFAULT_OUT})")
    args = parser.parse_args()
    dataset = build_dataset(load_corpus())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dataset_json(dataset), encoding="utf-8")
    counts: dict[str, int] = defaultdict(int)
    for edge in dataset["edges"]:
        counts[edge["edgeType"]] += 1
    print(f"{args.out}: {len(dataset['nodes'])} nodes, edges {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
