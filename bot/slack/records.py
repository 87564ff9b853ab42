"""What the Slack surface remembers about an answer it gave (for "Why this match", feedback,
App Home)."""

from __future__ import annotations

from bot.model import Diagnosis
from bot.slack.deps import Deps
from bot.store.base import DiagnosisRecord

MAX_STORED_INPUT = 256 << 10  # characters of redacted input kept per answer


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
    """Store the answer with its input (`query`, already redacted by ingest), so that sharing,
    `traindoc rematch` and `traindoc feedback export` can re-run it; a huge input keeps its
    head and tail."""
    best = diagnosis.best
    payload = diagnosis.to_json()
    payload["kind"] = diagnosis.kind
    if query:
        payload["input"] = (
            query
            if len(query) <= MAX_STORED_INPUT
            else query[: MAX_STORED_INPUT // 4] + "\n...\n" + query[-MAX_STORED_INPUT // 4 * 3 :]
        )
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
