"""Write the forms of the wire contracts generated from brain_graph/core/contracts.py: the graph state's
TypedDicts (brain_graph/core/wire_generated.py) and the GraphQL SDL (brain_graph/serving/graphql/schema.graphql).

    .venv/bin/python scripts/generate_wire.py          # write both
    .venv/bin/python scripts/generate_wire.py --check  # write nothing; exit 1 naming each stale file

Run it after changing a model; the tests fail while a committed file differs from what it writes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from brain_graph.core.wire_codegen import WIRE_GENERATED_PATH, render_wire
from brain_graph.serving.graphql.schema import SCHEMA_PATH
from brain_graph.serving.graphql.sdl import render_sdl

GENERATED: tuple[tuple[Path, Callable[[], str]], ...] = ((WIRE_GENERATED_PATH, render_wire), (SCHEMA_PATH, render_sdl))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report the files that differ")
    check = parser.parse_args(argv).check
    stale = []
    for path, render in GENERATED:
        text = render()
        if (path.read_text(encoding="utf-8") if path.exists() else None) != text:
            stale.append(path)
            if not check:
                path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'stale' if check else 'written'}: {path}", file=sys.stderr)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
