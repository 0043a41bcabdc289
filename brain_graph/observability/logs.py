"""brain-graph's log records: each carries ``request_id`` (the HTTP request it was logged for, ``-``
outside one), and ``BRAIN_GRAPH_LOG_FORMAT`` chooses how brain-graph's loggers write: unset, through
the host application's logging (as any library); ``text`` or ``json`` (one JSON object per line,
python-json-logger), to stderr with the request id.

Errors of the caller's request (:data:`CALLER_ERRORS`) that a host logs with a traceback (the
LangGraph server's run worker logs every failed run so) are rewritten by :class:`CallerErrorsAtInfo`
to one INFO line with the error's code: they are answers, not faults of the server. A record about a
brain-graph error carries its code as ``code`` (:class:`ErrorCodes`), a field of the JSON lines.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from brain_graph.core.errors import (
    AuthorizationError,
    BrainGraphError,
    CapacityError,
    InvalidRequestError,
    RateLimitedError,
    one_line_message,
)
from brain_graph.observability.requests import REQUEST_ID

FORMAT_VARIABLE = "BRAIN_GRAPH_LOG_FORMAT"
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s request_id=%(request_id)s %(message)s"
JSON_FIELDS = ("asctime", "levelname", "name", "request_id", "message")
CALLER_ERRORS: tuple[type[BrainGraphError], ...] = (
    InvalidRequestError,
    AuthorizationError,
    RateLimitedError,
    CapacityError,
)
HOST_RUN_LOGGERS = ("langgraph_api.worker",)  # where the LangGraph server logs failed runs
CODE_ATTRIBUTE = "code"  # the brain-graph error code a record is about, when it is about one
_handler_name = "brain_graph"


def install_request_ids() -> None:
    """Give every log record a ``request_id`` attribute (idempotent)."""
    factory = logging.getLogRecordFactory()
    if getattr(factory, "brain_graph_request_ids", False):
        return

    def record_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        record.request_id = REQUEST_ID.get() or "-"
        return record

    record_factory.brain_graph_request_ids = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(record_factory)


# How the LangGraph server's run worker reports a failed run, its traceback already rendered.
_HOST_FAILED_RUN = re.compile(r"Background run failed\. Exception: <class '([\w.]+)'>\((.*)\)", re.DOTALL)


def error_classes() -> dict[str, type[BrainGraphError]]:
    """Every brain-graph error class by its qualified name (``module.Class``)."""
    found: dict[str, type[BrainGraphError]] = {}
    pending: list[type[BrainGraphError]] = [BrainGraphError]
    while pending:
        cls = pending.pop()
        found[f"{cls.__module__}.{cls.__qualname__}"] = cls
        pending.extend(cls.__subclasses__())
    return found


def refused_request(record: logging.LogRecord) -> tuple[str, str] | None:
    """The code and message of the caller error a record carries (its ``exc_info``, a structlog
    event's ``exc_info``, or the brain-graph error class a LangGraph server's failed-run event names),
    or None when it carries none."""
    info: Any = record.exc_info
    if not info and isinstance(record.msg, dict):
        info = record.msg.get("exc_info")
        named = _HOST_FAILED_RUN.fullmatch(str(record.msg.get("event", "")))
        if not info and named is not None:
            cls = error_classes().get(named.group(1))
            if cls is not None and issubclass(cls, CALLER_ERRORS):
                return cls.code, named.group(2)
            return None
    error = info if isinstance(info, BaseException) else info[1] if isinstance(info, tuple) and len(info) == 3 else None
    if isinstance(error, CALLER_ERRORS):
        return error.code, str(error)
    return None


class ErrorCodes(logging.Filter):
    """Gives a record whose ``exc_info`` is a brain-graph error that error's code as ``code`` (a record
    that has one already keeps it); every record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = record.exc_info
        error = info[1] if isinstance(info, tuple) else None
        if isinstance(error, BrainGraphError) and not hasattr(record, CODE_ATTRIBUTE):
            setattr(record, CODE_ATTRIBUTE, error.code)
        return True


class CallerErrorsAtInfo(logging.Filter):
    """Rewrites a record carrying a caller error to one INFO line with the error's code and message,
    without the traceback; other records pass unchanged. Never fails: logging goes on whatever a
    record holds."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            refused = refused_request(record)
        except Exception:  # a filter must not break the caller's logging
            return True
        if refused is None:
            return True
        code, message = refused
        line = f"request refused: {code}: {one_line_message(message, 500)}"
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        setattr(record, CODE_ATTRIBUTE, code)
        if isinstance(record.msg, dict):  # a structlog event (the LangGraph server's logs)
            dropped = ("exc_info", "exception", "stack")
            event = {key: value for key, value in record.msg.items() if key not in dropped}
            record.msg = {**event, "event": line, **({"level": "info"} if "level" in event else {})}
        else:
            record.msg, record.args = "%s", (line,)
        record.exc_info, record.exc_text = None, None
        return True


def formatter(log_format: str) -> logging.Formatter:
    """The formatter of ``text`` or ``json``."""
    if log_format == "json":
        return JsonFormatter(
            list(JSON_FIELDS), rename_fields={"asctime": "time", "levelname": "level", "name": "logger"}
        )
    return logging.Formatter(TEXT_FORMAT)


def configure_logging(log_format: str | None) -> None:
    """Request ids on every record, caller errors of the host's run logs at INFO, and, with a format
    (``text``, ``json``), brain-graph's loggers writing to stderr in it (once; not to the host's
    handlers as well). Raises :class:`ValueError` naming :data:`FORMAT_VARIABLE` for another value."""
    install_request_ids()
    for name in HOST_RUN_LOGGERS:
        host = logging.getLogger(name)
        if not any(isinstance(existing, CallerErrorsAtInfo) for existing in host.filters):
            host.addFilter(CallerErrorsAtInfo())
    if not log_format:
        return
    if log_format not in FORMATS:
        raise ValueError(f"{FORMAT_VARIABLE} must be one of {', '.join(FORMATS)} (got {log_format[:40]!r})")
    logger = logging.getLogger("brain_graph")
    for existing in list(logger.handlers):
        if existing.get_name() == _handler_name:
            logger.removeHandler(existing)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_handler_name)
    handler.setFormatter(formatter(log_format))
    handler.addFilter(ErrorCodes())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
