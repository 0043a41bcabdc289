"""The bundled deterministic embedder."""

from __future__ import annotations

import subprocess
import sys

from brain_graph.core.scoring import cosine
from brain_graph.embedding.lexical import LexicalHashEmbeddings, tokenize


def test_same_text_same_vector_and_unit_norm() -> None:
    embedder = LexicalHashEmbeddings()
    first = embedder.embed_query("Token refresh race")
    assert first == embedder.embed_documents(["Token refresh race"])[0]
    assert len(first) == 512
    assert abs(sum(v * v for v in first) - 1.0) < 1e-9


def test_vectors_do_not_depend_on_the_python_process() -> None:
    code = (
        "from brain_graph.embedding.lexical import LexicalHashEmbeddings as E; print(E().embed_query('auth flow')[:8])"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": seed}
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1


def test_camel_case_and_snake_case_are_split() -> None:
    assert tokenize("AuthService token_refresh HTTPServer") == ["auth", "service", "token", "refresh", "http", "server"]


def test_seed_002_example_ranks_related_concepts_higher() -> None:
    embedder = LexicalHashEmbeddings()
    query = embedder.embed_query("user authentication")
    concepts = {
        "AuthService": "AuthService: authenticates users and issues sessions",
        "LoginHandler": "LoginHandler: handles the user login form",
        "DatabasePool": "DatabasePool: keeps pooled database connections",
    }
    scores = {name: cosine(query, embedder.embed_query(text)) for name, text in concepts.items()}
    assert scores["AuthService"] > scores["DatabasePool"]
    assert scores["LoginHandler"] > scores["DatabasePool"]


def test_word_pieces_carry_signal() -> None:
    embedder = LexicalHashEmbeddings()
    query = embedder.embed_query("authentication")
    assert cosine(query, embedder.embed_query("authenticator")) > cosine(query, embedder.embed_query("billing"))


def test_empty_text_gives_a_zero_vector() -> None:
    assert set(LexicalHashEmbeddings(dimension=16).embed_query("")) == {0.0}
