"""What the Slack surface remembers about an answer it gave (for "Why this match", feedback, App Home)."""

from __future__ import annotations

from bot.model import Diagnosis
from bot.slack.deps import Deps
from bot.store.base import DiagnosisRecord


def record_answer(
    deps: Deps,
    diagnosis: Diagnosis,
    *,
    team_id: str,
    channel: str,
    user: str,
    origin: str,
    message_ts: str = "",
    query: str = "",
) -> DiagnosisRecord:
    """Store the answer; `query` (already redacted) is kept only where a button must re-run it (share)."""
    best = diagnosis.best
    payload = diagnosis.to_json()
    if query:
        payload["input"] = query
    return deps.store.record_diagnosis(
        DiagnosisRecord(
            team_id=team_id,
            channel=channel,
            message_ts=message_ts,
            user=user,
            origin=origin,
            verdict=diagnosis.verdict,
            confidence=diagnosis.confidence,
            entry_id=best.id if best else "",
            title=best.title if best and diagnosis.verdict == "match" else "No confident match",
            payload=payload,
        )
    )
