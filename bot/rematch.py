"""`traindoc rematch`: re-diagnose stored (redacted) inputs against the current knowledge base and
list the answers that changed; optionally tell each Slack thread once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.ingest import report_from_text
from bot.model import Diagnosis
from bot.store.base import DiagnosisRecord

FOREVER_S = 10 * 365 * 24 * 3600.0  # a posted rematch claim never expires in practice


@dataclass(frozen=True)
class Change:
    record: DiagnosisRecord
    was: str  # entry id, or the verdict when no entry was answered
    now: str
    now_title: str
    now_confidence: float

    @property
    def postable(self) -> bool:
        """Slash-command answers have no thread to reply in."""
        return bool(self.record.channel and self.record.message_ts)

    @property
    def claim_key(self) -> str:
        return f"rematch:{self.record.id}:{self.now}"


def answer_of(verdict: str, entry_id: str) -> str:
    return entry_id if verdict == "match" and entry_id else verdict


def changed_answers(
    records: Iterable[DiagnosisRecord], diagnose: Callable[..., Diagnosis]
) -> list[Change]:
    changes: list[Change] = []
    for record in records:
        text = record.payload.get("input", "")
        if not text:
            continue
        kind = record.payload.get("kind")
        report = report_from_text(text)
        if kind in ("log", "question") and report.kind != kind:
            report = report.model_copy(update={"kind": kind})
        diagnosis = diagnose(report)
        best = diagnosis.best
        now = answer_of(diagnosis.verdict, best.id if best else "")
        was = answer_of(record.verdict, record.entry_id)
        if now != was:
            title = best.title if best and diagnosis.verdict == "match" else diagnosis.verdict
            changes.append(Change(record, was, now, title, diagnosis.confidence))
    return changes


def rematch_text(change: Change, titles: dict[str, str]) -> str:
    was = titles.get(change.was, change.was)
    if change.now in titles:
        return (
            f"Update: with the current knowledge base this now matches *{change.now_title}* "
            f"(confidence {change.now_confidence:.2f}); it was {was}."
        )
    return f"Update: with the current knowledge base this is now `{change.now}`; it was {was}."
