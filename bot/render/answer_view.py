"""What an answer shows, decided once: the Block Kit and terminal renderers both draw this view
(the JSON contract, bot/contract.py, carries the whole diagnosis instead).

A view says which verdict is shown and which of the diagnosis's parts go with it: the runner-up
(only when it is information, not noise), the evidence lines, the initiating rank, the harmless
warnings folded into one line, the nearest entries, the "paste next" advice, the siblings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.model import Candidate, Diagnosis, FingerprintHit, Triage, UserFrame
from bot.render.text import location

RUNNER_UP_MIN = 0.05  # a runner-up below this is noise, not information
MAX_EVIDENCE_LINES = 4
MAX_HARMLESS = 5
MAX_NEAREST = 3
MAX_ALSO_HARMLESS = 4

Shown = Literal["match", "benign", "user-code", "abstain"]


@dataclass(frozen=True)
class AnswerView:
    shown: Shown
    diagnosis: Diagnosis
    best: Candidate | None  # the answer (match, benign); None otherwise
    runner_up: Candidate | None
    evidence: tuple[FingerprintHit, ...]  # the best candidate's hits, one per line
    initiating: str  # where the job failed first, "" when triage says nothing
    harmless: tuple[Candidate, ...]  # benign warnings folded into "Also in this log (harmless)"
    also_harmless: tuple[Candidate, ...]  # a benign answer's other harmless entries
    nearest: tuple[Candidate, ...]  # an abstention's (or a bug in user code's) nearest entries
    paste_next: tuple[str, ...]  # what to paste so that the next attempt can decide
    siblings: tuple[str, ...]  # ids of the answer's siblings that can be shown
    user_frame: UserFrame | None
    reason: str  # why no entry was answered

    @property
    def confidence(self) -> float:
        return self.diagnosis.confidence


def answer_view(diagnosis: Diagnosis, *, titles: Mapping[str, str] | None = None) -> AnswerView:
    """The view of one diagnosis; `titles` (id -> title) limits siblings to entries that exist."""
    best = diagnosis.best
    shown: Shown = "abstain"
    if diagnosis.verdict == "match" and best is not None:
        shown = "match"
    elif diagnosis.verdict == "benign" and best is not None:
        shown = "benign"
    elif diagnosis.verdict == "user-code" and diagnosis.user_frame is not None:
        shown = "user-code"
    answer = best if shown in ("match", "benign") else None
    siblings = answer.entry.siblings if answer is not None and shown == "match" else ()
    return AnswerView(
        shown=shown,
        diagnosis=diagnosis,
        best=answer,
        runner_up=_runner_up(diagnosis) if shown == "match" else None,
        evidence=evidence_lines(answer) if answer is not None else (),
        initiating=triage_line(diagnosis.triage),
        harmless=diagnosis.harmless[:MAX_HARMLESS],
        also_harmless=diagnosis.results[1 : 1 + MAX_ALSO_HARMLESS] if shown == "benign" else (),
        nearest=diagnosis.results[:MAX_NEAREST] if shown in ("abstain", "user-code") else (),
        paste_next=paste_next(diagnosis) if shown == "abstain" else (),
        siblings=tuple(s for s in siblings if titles is None or s in titles),
        user_frame=diagnosis.user_frame if shown == "user-code" else None,
        reason=diagnosis.abstain_reason or "no entry's evidence is strong enough",
    )


def _runner_up(diagnosis: Diagnosis) -> Candidate | None:
    if len(diagnosis.results) < 2 or diagnosis.results[1].confidence < RUNNER_UP_MIN:
        return None
    return diagnosis.results[1]


def evidence_lines(candidate: Candidate) -> tuple[FingerprintHit, ...]:
    """The candidate's fingerprint hits, one per line (several patterns may hit one line)."""
    seen: set[tuple[str | None, int]] = set()
    out: list[FingerprintHit] = []
    for hit in candidate.why.fingerprints:
        if (hit.file, hit.line) in seen:
            continue
        seen.add((hit.file, hit.line))
        out.append(hit)
        if len(out) == MAX_EVIDENCE_LINES:
            break
    return tuple(out)


def triage_line(triage: Triage | None) -> str:
    if triage is None:
        return ""
    if triage.summary:
        init = triage.initiating
        return triage.summary + (
            f" · first error at {location(init.file, init.line)}" if init else ""
        )
    if triage.no_single_initiator:
        return "all ranks failed at about the same time: no single initiating rank"
    init = triage.initiating
    if init is None:
        return ""
    where = f"rank {init.rank}" if init.rank is not None else "the first failing process"
    if init.node:
        where += f" on {init.node}"
    tail = f" · {len(triage.collateral_ranks)} ranks collateral" if triage.collateral_ranks else ""
    return f"{where} failed first ({location(init.file, init.line)}){tail}"


def paste_next(diagnosis: Diagnosis) -> tuple[str, ...]:
    """What evidence would let the next attempt decide."""
    if diagnosis.kind == "question":
        return (
            "Paste the log or traceback itself (or attach it as a file): exact error lines decide "
            "far "
            "better than a description.",
        )
    tips = ["the first error of the first failing rank with ~50 lines before it"]
    triage = diagnosis.triage
    if triage is None or not triage.versions:
        tips.append("versions (`python -m torch.utils.collect_env`, `nvidia-smi`, NCCL version)")
    tips.append(
        "for hangs or timeouts: the log with `NCCL_DEBUG=INFO` and `TORCH_DISTRIBUTED_DEBUG=DETAIL`"
    )
    tips.append("`dmesg -T | tail -50` from the node (OOM kills, Xid errors)")
    return tuple(tips)
