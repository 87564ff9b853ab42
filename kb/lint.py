"""Static checks of the knowledge base: everything that needs no retrieval (docs/kb-authoring.md).

Besides the per-entry checks, the fingerprint hygiene rules:
a strong fingerprint of a failure entry must not match any line of the healthy-log corpus
(kb/healthy/*.log: lines every healthy run prints are at most supporting), and must not match a
sample of another entry unless one of the two is collateral or the first entry's requires/excludes
gate rules it out on that sample. A benign entry's line may appear in failure samples (a harmless
warning printed before a real failure); precedence settles those, so benign fingerprints are not
held to the cross-entry rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kb.load import KBLoadError, KnowledgeBase, load_kb
from kb.patterns import PatternError, compile_linear
from kb.schema import Entry

HEALTHY_DIR = Path(__file__).with_name("healthy")

_SPACE = re.compile(r"\s+")


def _normalized(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def todo_fields(entry: Entry) -> list[str]:
    """The fields of a drafted entry (`traindoc kb new`) that nobody has written yet."""
    data = entry.model_dump()
    return [name for name, value in data.items() if "TODO" in str(value)]


def static_problems(kb: KnowledgeBase) -> list[str]:
    """Unknown siblings, patterns the linear-time engine cannot compile, fingerprints matching
    none of their entry's samples, and one sample text written into two entries."""
    problems: list[str] = []
    ids = set(kb.ids())
    owner_of_sample: dict[str, str] = {}
    for entry in kb.entries:
        where = entry.id
        for sibling in entry.siblings:
            if sibling not in ids:
                problems.append(f"{where}: unknown sibling {sibling}")
            if sibling == entry.id:
                problems.append(f"{where}: lists itself as a sibling")
        for kind, patterns in (
            ("fingerprint", [f.pattern for f in entry.fingerprints]),
            ("requires", list(entry.requires)),
            ("excludes", list(entry.excludes)),
        ):
            for pattern in patterns:
                try:
                    compiled = compile_linear(pattern)
                except PatternError as exc:
                    problems.append(f"{where}: {kind} does not compile in RE2: {exc}")
                    continue
                if kind == "fingerprint" and not any(compiled.search(s) for s in entry.samples):
                    problems.append(f"{where}: fingerprint {pattern!r} matches none of its samples")
        problems.extend(f"{where}: {field} still says TODO" for field in todo_fields(entry))
        for sample in entry.samples:
            key = _normalized(sample)
            other = owner_of_sample.setdefault(key, entry.id)
            if other != entry.id:
                problems.append(f"{where}: a sample is also a sample of {other}")
    return problems


@dataclass(frozen=True)
class HealthyLog:
    name: str
    text: str


def healthy_logs(directory: Path = HEALTHY_DIR) -> list[HealthyLog]:
    """The healthy-log corpus: logs of runs that went fine, composed in the printing software's
    format."""
    if not directory.is_dir():
        return []
    return [
        HealthyLog(p.name, p.read_text(encoding="utf-8")) for p in sorted(directory.glob("*.log"))
    ]


def _compiled(pattern: str) -> Any:
    try:
        return compile_linear(pattern)
    except PatternError:
        return None  # static_problems reports it


def healthy_problems(kb: KnowledgeBase, logs: list[HealthyLog]) -> list[str]:
    """Strong fingerprints of failure entries that would fire on a healthy log: the line matches
    and the entry's requires/excludes let it count there (a healthy line kept strong only beside a
    failure line, e.g. "checkpoint about to be saved" with a watchdog timeout, is that pair)."""
    problems: list[str] = []
    for entry in kb.entries:
        if entry.kind != "failure":
            continue
        for pattern in entry.strong_patterns:
            compiled = _compiled(pattern)
            if compiled is None:
                continue
            for log in logs:
                if gated_out(entry, log.text):
                    continue
                match = compiled.search(log.text)
                if match is not None:
                    line = log.text.count("\n", 0, match.start()) + 1
                    problems.append(
                        f"{entry.id}: strong fingerprint {pattern!r} matches healthy "
                        f"log {log.name} line {line} "
                        "(a line healthy runs print is at most supporting)"
                    )
                    break
    return problems


def gated_out(entry: Entry, text: str) -> bool:
    """Would the entry's requires/excludes gate rule its fingerprints out on this text?"""
    for pattern in entry.requires:
        compiled = _compiled(pattern)
        if compiled is not None and compiled.search(text) is None:
            return True
    for pattern in entry.excludes:
        compiled = _compiled(pattern)
        if compiled is not None and compiled.search(text) is not None:
            return True
    return False


def cross_entry_problems(kb: KnowledgeBase) -> list[str]:
    """A strong fingerprint of a failure entry A matching a sample of another entry B, unless A or
    B is collateral or A's gate rules A out on that sample."""
    problems: list[str] = []
    for a in kb.entries:
        if a.kind != "failure" or a.collateral or not a.strong_patterns:
            continue
        patterns = [(p, c) for p in a.strong_patterns if (c := _compiled(p)) is not None]
        for b in kb.entries:
            if b.id == a.id or b.collateral:
                continue
            for k, sample in enumerate(b.samples):
                hits = [p for p, c in patterns if c.search(sample) is not None]
                if hits and not gated_out(a, sample):
                    problems.append(
                        f"{a.id}: strong fingerprint {hits[0]!r} matches sample {k + 1} of {b.id} "
                        "(gate it with requires/excludes, demote it to supporting, or mark the "
                        "follow-on entry collateral)"
                    )
    return problems


def healthy_dir_for(entries_dir: Path | None) -> Path:
    """The healthy corpus beside an entries directory (`<kb>/entries` -> `<kb>/healthy`) when
    there is one, else the bundled corpus."""
    if entries_dir is not None and (entries_dir.parent / "healthy").is_dir():
        return entries_dir.parent / "healthy"
    return HEALTHY_DIR


def hygiene_problems(kb: KnowledgeBase, healthy_dir: Path | None = None) -> list[str]:
    """Both fingerprint hygiene rules (`traindoc kb lint --hygiene` prints only these)."""
    healthy = healthy_dir if healthy_dir is not None else HEALTHY_DIR
    return healthy_problems(kb, healthy_logs(healthy)) + cross_entry_problems(kb)


def main(root: Path | None = None) -> int:
    """`python -m kb.lint`: the static half of `traindoc kb lint`, for authors."""
    try:
        kb = load_kb(root)
    except KBLoadError as exc:
        print(exc)
        return 1
    problems = static_problems(kb) + hygiene_problems(kb, healthy_dir_for(root))
    for problem in problems:
        print(problem)
    print(f"{len(kb.entries)} entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    import sys

    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
