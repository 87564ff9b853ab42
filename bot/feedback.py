"""What the stored answers and 👍/👎 say, read back: eval cases from corrections, usage stats.

Pure functions over store records; the CLI (`traindoc feedback export`, `traindoc stats`) does I/O.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.store.base import NONE_OF_THESE, DiagnosisRecord, Feedback

NONE_LABEL = "none"  # the eval format's label for "no failure entry answers this"


@dataclass(frozen=True)
class ExportedCase:
    diagnosis_id: str
    case: dict


def latest_feedback(feedback: Iterable[Feedback]) -> dict[str, Feedback]:
    """The last word of any user on each diagnosis."""
    latest: dict[str, Feedback] = {}
    for item in sorted(feedback, key=lambda f: f.created_at):
        if item.diagnosis_id:
            latest[item.diagnosis_id] = item
    return latest


def cases_from_feedback(
    records: Sequence[DiagnosisRecord],
    feedback: Iterable[Feedback],
    known_ids: set[str],
    *,
    helpful: bool = False,
) -> tuple[list[ExportedCase], int]:
    """Every corrected answer (and, with `helpful`, every confirmed one) as an eval case; also how
    many had feedback but no stored input to replay."""
    by_id = {r.id: r for r in records}
    cases: list[ExportedCase] = []
    missing_input = 0
    for diagnosis_id, item in latest_feedback(feedback).items():
        record = by_id.get(diagnosis_id)
        if record is None or not (item.corrected or (helpful and item.helpful)):
            continue
        text = record.payload.get("input", "")
        if not text:
            missing_input += 1
            continue
        if item.helpful:
            label = record.entry_id or NONE_LABEL
        else:
            label = item.correct_id if item.correct_id in known_ids else NONE_LABEL
        case = {
            "text": text,
            "kind": record.payload.get("kind", "log"),
            "label": label,
            "source": f"traindoc feedback on diagnosis {diagnosis_id} "
            f"({'confirmed' if item.helpful else 'corrected'})",
            "answered": record.entry_id or NONE_LABEL,
        }
        note = item.note or (
            ""
            if item.correct_id in known_ids or item.correct_id == NONE_OF_THESE
            else item.correct_id
        )
        if note:
            case["note"] = note
        cases.append(ExportedCase(diagnosis_id, case))
    return cases, missing_input


@dataclass
class EntryStats:
    answers: int = 0
    helpful: int = 0
    wrong: int = 0
    corrected_to: Counter = field(default_factory=Counter)

    @property
    def helpful_rate(self) -> float | None:
        rated = self.helpful + self.wrong
        return self.helpful / rated if rated else None


def usage_stats(
    records: Sequence[DiagnosisRecord], feedback: Iterable[Feedback], category_of: dict[str, str]
) -> dict:
    """Answers per entry and category, helpful rate per entry, abstention rate, and the entries most
    often corrected with what they were corrected to."""
    per_entry: dict[str, EntryStats] = defaultdict(EntryStats)
    verdicts = Counter(r.verdict for r in records)
    by_id = {r.id: r for r in records}
    for record in records:
        if record.verdict == "match" and record.entry_id:
            per_entry[record.entry_id].answers += 1
    for diagnosis_id, item in latest_feedback(feedback).items():
        stored = by_id.get(diagnosis_id)
        if stored is not None and stored.verdict != "match":
            # an abstention named no entry: the correction is a coverage gap, not an entry's fault
            continue
        entry_id = stored.entry_id if stored is not None else item.predicted_id
        if not entry_id:
            continue
        stats = per_entry[entry_id]
        if item.helpful:
            stats.helpful += 1
        else:
            stats.wrong += 1
            if item.correct_id:
                stats.corrected_to[
                    item.correct_id if item.correct_id in category_of else NONE_LABEL
                ] += 1
    per_category: Counter[str] = Counter()
    for entry_id, stats in per_entry.items():
        per_category[category_of.get(entry_id, "unknown")] += stats.answers
    corrected = sorted(
        (e for e in per_entry.items() if e[1].wrong), key=lambda e: (-e[1].wrong, e[0])
    )
    total = len(records)
    return {
        "diagnoses": total,
        "verdicts": dict(verdicts),
        "abstention_rate": verdicts.get("abstain", 0) / total if total else 0.0,
        "entries": {
            entry_id: {
                "answers": s.answers,
                "helpful": s.helpful,
                "wrong": s.wrong,
                "helpful_rate": s.helpful_rate,
            }
            for entry_id, s in sorted(per_entry.items(), key=lambda e: (-e[1].answers, e[0]))
        },
        "categories": dict(per_category.most_common()),
        "most_corrected": [
            {
                "entry": entry_id,
                "wrong": s.wrong,
                "corrected_to": dict(s.corrected_to.most_common()),
            }
            for entry_id, s in corrected[:10]
        ],
    }
