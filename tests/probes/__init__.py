"""Adversarial regression tests: each module covers one attack class (its docstring says which) and
asserts the safe behaviour; the server module runs on the real Neo4j + Weaviate servers."""
