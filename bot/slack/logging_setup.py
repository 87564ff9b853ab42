"""Logging for `traindoc serve`: one handler on stderr, plain lines or JSON objects, a chosen level.

Every record passes through bot.redact: log lines can quote users' logs and exceptions.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from bot.redact import redact

LEVELS = ("debug", "info", "warning", "error")


class RedactingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str = "info", *, json_lines: bool = False) -> None:
    if level.lower() not in LEVELS:
        raise ValueError(f"--log-level must be one of {', '.join(LEVELS)}, not {level!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if json_lines
        else RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # slack_sdk logs whole request bodies (users' logs) at debug: keep it at warning unless asked
    if level.lower() != "debug":
        logging.getLogger("traindoc.slack.web").setLevel(logging.WARNING)
