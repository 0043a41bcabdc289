"""Ending a LangGraph server that cannot serve: one line on stderr naming what to set, and a non-zero
exit status instead of a traceback and a server that keeps running.

A module ``langgraph.json`` names (the auth module, a graph factory) is imported by the server
process. Under ``langgraph dev --no-reload`` (and ``langgraph up``) that is the process the caller
started, and it exits with :data:`EXIT_STATUS`, at once (``os._exit``, after flushing stdout and
stderr): a :class:`SystemExit` would pass through the server's import machinery, which logs it as a
failure in more lines, and nothing has started yet that the exit could leave unfinished.

Under ``langgraph dev`` with reloading (its default) that process is a worker that uvicorn's reloader
spawned. When the worker ends, the reloader waits for a source file to change and keeps running, and
it exits with status 0 on SIGTERM or SIGINT (its own handlers). A configuration error is not fixed by
editing a source file, so the reloader is ended too, with SIGKILL, the one signal it cannot turn into
status 0 (the shell sees 137).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from typing import NoReturn

from brain_graph.core.errors import one_line_message

EXIT_STATUS = 2  # a bad configuration, as for the CLI
DEV_VARIANT = ("LANGSMITH_LANGGRAPH_API_VARIANT", "local_dev")  # what `langgraph dev` sets for its server


def refuse_to_start(problem: str) -> NoReturn:
    """Write ``brain-graph: the server cannot start: <problem>`` (one line) to stderr and end the
    server: this process with :data:`EXIT_STATUS`, and the ``langgraph dev`` reloader that spawned it,
    if any (see the module's docstring)."""
    sys.stderr.write(f"brain-graph: the server cannot start: {one_line_message(problem)}\n")
    sys.stdout.flush()
    sys.stderr.flush()
    reloader = dev_reloader_pid()
    if reloader is not None:
        os.kill(reloader, signal.SIGKILL)
    os._exit(EXIT_STATUS)


def dev_reloader_pid() -> int | None:
    """The process id of the ``langgraph dev`` reloader when this process is its worker (a
    multiprocessing child of it, in a server ``langgraph dev`` started), else ``None``."""
    name, value = DEV_VARIANT
    if os.environ.get(name) != value:
        return None
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None or parent.pid != os.getppid():
        return None
    return parent.pid
