"""The dependencies every Slack handler factory takes explicitly (no globals, no import-time
I/O)."""

from __future__ import annotations

import logging
import threading
import traceback
from dataclasses import dataclass, field

from bot.model import Diagnosis, DiagnosisEngine, Report
from bot.redact import redact
from bot.settings import Settings
from bot.slack.metrics import Metrics
from bot.slack.workers import WorkerPool
from bot.store.base import Store
from kb.schema import Entry

log = logging.getLogger("traindoc.slack")


def log_failure(message: str, *args: object) -> None:
    """log.exception, with the traceback redacted (exceptions can quote the user's log and its
    secrets)."""
    log.error(message + "\n%s", *args, redact(traceback.format_exc()))


@dataclass
class Deps:
    settings: Settings
    engine: DiagnosisEngine
    store: Store
    # slow work, off Bolt's threads (sized from the settings by create_app)
    pool: WorkerPool
    # Messages that must download first wait on the network, not the CPU: a lane of their own so
    # slow file hosts never hold the workers that answer pasted logs.
    downloads: WorkerPool
    # At most this many diagnoses run at once, whoever asks (messages, commands, shares).
    slots: threading.BoundedSemaphore
    metrics: Metrics = field(default_factory=Metrics)
    _titles: dict[str, str] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def titles(self) -> dict[str, str]:
        """Entry id -> title, for sibling buttons (computed once, on first use)."""
        with self._lock:
            if self._titles is None:
                self._titles = {e.id: e.title for e in self.engine.entries()}
            return self._titles

    def entry(self, entry_id: str) -> Entry | None:
        return self.engine.entry(entry_id.strip())

    def diagnose(self, report: Report) -> Diagnosis:
        """The engine's answer, in one of the diagnosis slots (waits for one to free up)."""
        with self.slots:
            return self.engine.diagnose(report)

    @property
    def max_download_bytes(self) -> int:
        return self.settings.max_download_bytes
