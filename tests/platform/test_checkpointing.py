"""The state is JSON-native: under a checkpointer with strict msgpack, a second turn on the same
thread reads back exactly what the first wrote, with no deserialisation warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

TWO_TURNS = """
import json, logging, sys
from pathlib import Path
from langgraph.checkpoint.memory import InMemorySaver
from brain_graph import BrainSearchContext, Principal, build_graph, search_input
from tests.helpers import SMALL_GRAPH, make_store

class Recorder(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


recorder = Recorder()
logging.getLogger().setLevel(logging.DEBUG)
logging.getLogger().addHandler(recorder)
graph = build_graph(make_store(Path(sys.argv[1]), SMALL_GRAPH), checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "t"}}
context = BrainSearchContext(principal=Principal("bob", ("security",)))
request = search_input("token refresh outage postmortem", "t1", options={"expandDepth": 2})
first = graph.invoke(request, config, context=context)
saved = graph.get_state(config).values
second = graph.invoke(request, config, context=context)
print(json.dumps({
    "first": first, "second": second, "saved": {key: saved[key] for key in first},
    "warnings": [m for m in recorder.messages if "unregistered" in m or "Deserializ" in m],
}))
"""


def test_two_turns_under_strict_msgpack_are_identical(tmp_path: Path) -> None:
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", TWO_TURNS, str(tmp_path)], capture_output=True, text=True, env=env, cwd=REPO_ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["warnings"] == []
    assert out["first"] == out["second"] == out["saved"]
    assert out["first"]["hits"]
    assert out["first"]["promptPack"]["citations"]
    assert "d2" in {hit["nodeId"] for hit in out["first"]["hits"]}
