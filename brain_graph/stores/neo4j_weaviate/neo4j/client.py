"""The Neo4j connection shared by the graph reads and the generation writes (official ``neo4j`` driver).

The driver connects lazily and bounds every call with its own settings: ``connection_timeout`` and
``connection_acquisition_timeout`` (a down or silent server), the server-side transaction timeout of
each statement (a slow query), no managed-transaction retries, and ``liveness_check_timeout``: a
pooled connection idle for over :data:`LIVENESS_CHECK_S` is checked before use, so one the server
closed (a restart takes longer than that) is replaced at once and the next call succeeds, while the
statements of one search reuse their connection unchecked. Reads run in a READ session per thread,
kept between statements (a session is not thread-safe; it borrows a pooled connection per
statement). Driver and server errors become
:class:`~brain_graph.core.errors.BackendUnavailableError` naming ``neo4j``, except what the URI itself gets
wrong: a URI :func:`uri_problem` refuses, or one the driver refuses (its configuration and value
errors, e.g. an address it cannot resolve as given), is a
:class:`~brain_graph.core.errors.ConfigurationError` naming ``NEO4J_URI``; and a transaction that reaches the
server's transaction memory limit (:data:`MEMORY_LIMIT_CODES`: a change or a search too large for
one transaction, rolled back) is a :class:`~brain_graph.core.errors.CapacityError` naming the setting,
not an outage. Every statement sent is counted
(:attr:`Neo4jClient.round_trips`).
"""

from __future__ import annotations

import contextlib
import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, LiteralString, TypeVar
from urllib.parse import urlsplit

import neo4j
from neo4j.exceptions import ConfigurationError as DriverConfigurationError
from neo4j.exceptions import DriverError, Neo4jError

from brain_graph.core.errors import BackendUnavailableError, BrainGraphError, CapacityError, ConfigurationError

BACKEND = "neo4j"
LIVENESS_CHECK_S = 1.0
T = TypeVar("T")
URI_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
# The codes of a transaction the server refused memory: the pool of all transactions
# (dbms.memory.transaction.total.max) or the limit of one (db.memory.transaction.max) was reached. The
# transaction is rolled back; the server itself is fine.
MEMORY_LIMIT_CODES = frozenset(
    {
        "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
        "Neo.TransientError.General.TransactionMemoryLimit",
        "Neo.TransientError.General.TransactionOutOfMemoryError",
    }
)
_MEMORY_SETTING = re.compile(r"\b((?:dbms|db)\.memory\.transaction\.[a-z_.]+)")


def memory_limit_error(error: Neo4jError) -> CapacityError | None:
    """The :class:`CapacityError` of a transaction the server refused memory (None: another error),
    naming the setting the server says was reached."""
    if error.code not in MEMORY_LIMIT_CODES:
        return None
    found = _MEMORY_SETTING.search(str(getattr(error, "message", None) or error))
    setting = found.group(1) if found else "db.memory.transaction.max"
    return CapacityError(
        f"{BACKEND}: the transaction needs more memory than the server allows ({setting} reached); the transaction "
        "was rolled back: send less at once (a smaller change, or a search with lower maxNodes, expandDepth or topK), "
        "or raise that server setting"
    )


class ThreadSession:
    """One thread's READ session on one driver, closed when the thread ends (its thread-local value
    goes, and with it this holder) or when the client closes, whichever comes first."""

    def __init__(self, driver: neo4j.Driver, session: neo4j.Session) -> None:
        self.driver = driver
        self.session = session
        self._close = weakref.finalize(self, _close_quietly, session)

    def close(self) -> None:
        self._close()


def _close_quietly(session: neo4j.Session) -> None:
    with contextlib.suppress(Exception):
        session.close()


def uri_problem(uri: str) -> str | None:
    """Why ``uri`` is not a Neo4j URI (``NEO4J_URI``): scheme one of :data:`URI_SCHEMES`, a host, a port
    in 1..65535 if any, no white space or control characters; ``None`` if it is one."""
    if any(char.isspace() or not char.isprintable() for char in uri):
        return "must not contain white space or control characters"
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError as error:
        return f"is not a valid URI ({error})"
    if parts.scheme not in URI_SCHEMES:
        return f"must start with one of {', '.join(f'{s}://' for s in URI_SCHEMES)} (e.g. bolt://127.0.0.1:7687)"
    if not parts.hostname:
        return "must name a host (e.g. bolt://127.0.0.1:7687)"
    try:
        parts.hostname.encode("idna")
    except UnicodeError:
        return f"host {parts.hostname[:80]!r} is not a valid host name"
    if port == 0:
        return "must have a port in 1..65535"
    return None


class Neo4jClient:
    """A lazily created driver, bounded statements and their count."""

    def __init__(
        self,
        *,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        timeout_s: float = 5.0,
        schema: Sequence[LiteralString] = (),
    ) -> None:
        self.uri = uri
        self.database = database
        self.timeout_s = timeout_s
        self._auth = (user, password)
        self._schema = tuple(schema)
        self._driver: neo4j.Driver | None = None
        self._lock = threading.Lock()
        self._schema_ready = False
        self._local = threading.local()
        self._sessions: weakref.WeakSet[ThreadSession] = weakref.WeakSet()  # live threads' READ sessions
        self.round_trips = 0

    def _misconfigured(self, problem: str) -> ConfigurationError:
        return ConfigurationError(f"NEO4J_URI {self.uri!r}: {' '.join(problem.split())[:300]}")

    def _get_driver(self) -> neo4j.Driver:
        with self._lock:
            if self._driver is None:
                problem = uri_problem(self.uri)
                if problem is not None:
                    raise self._misconfigured(problem)
                self._driver = neo4j.GraphDatabase.driver(
                    self.uri,
                    auth=self._auth,
                    connection_timeout=self.timeout_s,
                    connection_acquisition_timeout=self.timeout_s,
                    liveness_check_timeout=LIVENESS_CHECK_S,
                    max_transaction_retry_time=0.0,
                    notifications_min_severity="OFF",
                    user_agent="brain-graph",
                )
            return self._driver

    def _tick(self) -> None:
        with self._lock:
            self.round_trips += 1

    def failure(self, error: Exception) -> BrainGraphError:
        """The error to raise for a driver or server error: a :class:`CapacityError` for a transaction
        the server refused memory, else :meth:`unavailable`."""
        limited = memory_limit_error(error) if isinstance(error, Neo4jError) else None
        return limited if limited is not None else self.unavailable(error)

    def unavailable(self, error: Exception) -> BackendUnavailableError:
        """The :class:`BackendUnavailableError` of a driver or server error."""
        text = str(getattr(error, "message", None) or error) or type(error).__name__
        detail = " ".join(text.split())
        return BackendUnavailableError(BACKEND, f"{self.uri}: {type(error).__name__}: {detail[:300]}")

    def _run(self, work: Callable[[neo4j.Driver], T]) -> T:
        """Run ``work`` on the driver; map driver and server errors."""
        try:
            return work(self._get_driver())
        except DriverConfigurationError as error:
            raise self._misconfigured(f"refused by the neo4j driver: {error}") from None
        except ValueError as error:
            if not isinstance(error.__cause__, OSError):  # not the driver failing to resolve the address
                raise
            raise self._misconfigured(f"refused by the neo4j driver: {error}") from None
        except (DriverError, Neo4jError) as error:
            raise self.failure(error) from None

    def _read_session(self, driver: neo4j.Driver) -> neo4j.Session:
        """This thread's READ session on ``driver`` (sessions are not thread-safe; each borrows a pooled
        connection per statement), created on first use."""
        held: ThreadSession | None = getattr(self._local, "held", None)
        if held is None or held.driver is not driver:
            if held is not None:
                held.close()
            held = ThreadSession(driver, driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS))
            with self._lock:
                self._sessions.add(held)
            self._local.held = held
        return held.session

    def _forget_read_session(self) -> None:
        """Close this thread's READ session (after an error: the next statement gets a fresh one)."""
        held: ThreadSession | None = getattr(self._local, "held", None)
        self._local.held = None
        if held is not None:
            with self._lock:
                self._sessions.discard(held)
            held.close()

    def read(self, query: LiteralString, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One auto-commit statement in this thread's READ session (routed to a reader in a cluster),
        bounded by the server-side transaction timeout."""

        def work(driver: neo4j.Driver) -> list[neo4j.Record]:
            self._tick()
            session = self._read_session(driver)
            try:
                return list(session.run(neo4j.Query(query, timeout=self.timeout_s), dict(params)))
            except BaseException:
                self._forget_read_session()
                raise

        return self._run(work)

    def ping(self) -> None:
        """One trivial statement (``RETURN 1``) on the configured database, in a session of its own and
        bounded by the timeout, not counted in :attr:`round_trips`: returns when the server answers it
        with these credentials, else :class:`BackendUnavailableError` (or :class:`ConfigurationError`
        for a URI the driver refuses)."""

        def work(driver: neo4j.Driver) -> None:
            with driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session:
                session.run(neo4j.Query("RETURN 1", timeout=self.timeout_s)).consume()

        self._run(work)

    def write(self, work: Callable[[neo4j.Session], T]) -> T:
        """``work`` in a write session, after the schema statements ran (once per client)."""

        def run(driver: neo4j.Driver) -> T:
            with driver.session(database=self.database) as session:
                self._create_schema(session)
                return work(session)

        return self._run(run)

    def _create_schema(self, session: neo4j.Session) -> None:
        if not self._schema_ready:
            for statement in self._schema:
                self._tick()
                session.run(statement).consume()
            self._schema_ready = True

    def ensure_schema(self) -> None:
        """Run the schema statements now if this client has not yet (before reads that need an index)."""
        if not self._schema_ready:
            self.write(lambda _session: None)

    def transaction(self, session: neo4j.Session) -> neo4j.Transaction:
        """An explicit write transaction (``with`` it: rolled back unless committed)."""
        return session.begin_transaction()

    def run(self, tx: neo4j.Transaction, query: str, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One statement in an open transaction."""
        self._tick()
        return list(tx.run(query, dict(params)))

    def commit(self, session: neo4j.Session, query: str, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One statement in its own explicit write transaction."""
        self._tick()
        with session.begin_transaction() as tx:
            records = list(tx.run(query, dict(params)))
            tx.commit()
        return records

    def close(self) -> None:
        """Close the driver (a later call opens a new one)."""
        with self._lock:
            driver, self._driver = self._driver, None
            sessions, self._sessions = list(self._sessions), weakref.WeakSet()
        for held in sessions:
            held.close()
        if driver is not None:
            driver.close()
