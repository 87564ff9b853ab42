"""Static checks of the knowledge base: everything that needs no retrieval (DESIGN §2)."""

from __future__ import annotations

import re
from pathlib import Path

from kb.load import KBLoadError, KnowledgeBase, load_kb
from kb.patterns import PatternError, compile_linear
from kb.schema import Entry

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


def main(root: Path | None = None) -> int:
    """`python -m kb.lint`: the static half of `traindoc kb lint`, for authors."""
    try:
        kb = load_kb(root)
    except KBLoadError as exc:
        print(exc)
        return 1
    problems = static_problems(kb)
    for problem in problems:
        print(problem)
    print(f"{len(kb.entries)} entries, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    import sys

    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else None))
