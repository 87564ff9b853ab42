"""`traindoc kb new --from LOG`: draft a team entry from a pasted log.

The distinctive lines become fingerprint candidates (numbers, addresses, paths and timestamps
generalised, lines that every log prints left out), the nearest existing entries become siblings,
and every prose field is a TODO that `traindoc kb lint` refuses until a person fills it in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from bot.model import Diagnosis, Report
from index.query_text import strip_prefix
from kb.schema import CATEGORIES, ID_PATTERN

TODO = "TODO"
MAX_CANDIDATES = 5
MIN_LITERAL_CHARS = 16  # a candidate needs this much fixed text to be specific

# Lines worth a fingerprint: a final exception, an error/warning word, a driver or library failure.
_DISTINCTIVE = re.compile(
    r"(?:^|\s)(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception)\b:|\b(?:ERROR|FATAL|CRITICAL|WARN(?:ING)?)\b|"
    r"(?i:\b(?:failed|failure|timed out|timeout|refused|denied|cannot|unable to|not found|no such|"
    r"killed|abort)\b)"
)
# Lines every log prints, or that name nothing: kept out of the candidates.
_GENERIC = re.compile(
    r"^(?:Traceback \(most recent call last\):|File \"|During handling of|The above exception|\^+$|"
    r"~+$)"
)
# Volatile parts of a line, generalised: ISO times, hex addresses, paths, standalone numbers.
_VOLATILE = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)"
    r"|(?P<hex>\b0x[0-9a-fA-F]+\b)"
    r"|(?P<path>(?:/[\w.-]+){2,}/?)"
    r"|(?P<number>(?<![\w.])\d+(?:\.\d+)*(?![\w]))"
)
_GENERAL = {"time": r"\S+", "hex": "0x[0-9a-fA-F]+", "path": r"\S+", "number": r"\d+(?:\.\d+)*"}


@dataclass(frozen=True)
class Candidate:
    pattern: str
    line: int
    text: str


def _generalise(message: str) -> tuple[str, int]:
    """An RE2-compatible pattern for the line and how many of its characters stay literal."""
    parts: list[str] = []
    literal = 0
    last = 0
    for match in _VOLATILE.finditer(message):
        fixed = message[last : match.start()]
        parts += [_escape(fixed), _GENERAL[match.lastgroup or "number"]]
        literal += len(fixed.strip())
        last = match.end()
    parts.append(_escape(message[last:]))
    literal += len(message[last:].strip())
    return "".join(parts), literal


def _escape(text: str) -> str:
    # Escape only what is special to RE2, so the pattern stays readable (no "\ " for spaces).
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


def fingerprint_candidates(text: str, limit: int = MAX_CANDIDATES) -> list[Candidate]:
    """The log's distinctive lines as RE2-compatible patterns, the last (closest to the failure)
    first."""
    found: dict[str, Candidate] = {}
    after_frame = False
    for number, raw in enumerate(text.split("\n"), start=1):
        message = strip_prefix(raw)[:300]
        source_line, after_frame = after_frame, message.startswith('File "')
        # the line under a `File "..."` frame is source code, not something the program printed
        if (
            not message
            or source_line
            or _GENERIC.match(message)
            or not _DISTINCTIVE.search(message)
        ):
            continue
        pattern, literal = _generalise(message)
        if literal >= MIN_LITERAL_CHARS:
            found.pop(pattern, None)
            found[pattern] = Candidate(pattern, number, message)
    return list(reversed(found.values()))[:limit]


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    slug = "-".join(words) or "team-entry"
    return slug if re.match(ID_PATTERN, slug) else "team-entry"


def draft_entry(
    report: Report,
    diagnosis: Diagnosis,
    *,
    entry_id: str | None = None,
    category: str | None = None,
) -> dict:
    """The entry as a mapping ready for YAML: fingerprints and siblings filled, prose TODO."""
    candidates = fingerprint_candidates(report.text)
    nearest = [c for c in diagnosis.results if c.entry is not None and c.entry.kind == "failure"][
        :3
    ]
    if category is None:
        category = nearest[0].entry.category if nearest else CATEGORIES[0]
    headline = candidates[0].text if candidates else report.text.strip().split("\n")[-1]
    return {
        "id": entry_id or _slug(re.sub(r"^.*?(\w+(?:Error|Exception))", r"\1", headline)),
        "title": f"{TODO}: what failed, in a line an on-call engineer reads first",
        "category": category,
        "tags": [TODO],
        "summary": f"{TODO}: one or two sentences: what broke and why.",
        "symptoms": [f"{TODO}: what you observe, in plain words."],
        "fingerprints": [
            {
                "pattern": c.pattern,
                "strength": "strong",
                "source": f"{TODO}: program, versions and file that print line {c.line}",
            }
            for c in candidates
        ],
        "root_cause": [f"{TODO}: the mechanism, as your team established it."],
        "fix": [f"{TODO}: concrete steps, cheapest and likeliest first."],
        "confirm": [f"{TODO}: how to prove this is the cause."],
        "siblings": [c.id for c in nearest],
        "references": [
            {"title": f"{TODO}: your runbook or ticket", "url": "https://example.invalid/TODO"}
        ],
        "samples": [
            report.text.strip()[-4000:],
            f"{TODO}: a second log excerpt of the same failure.",
        ],
        "questions": [f"{TODO}: a question an engineer would type in Slack."],
    }


def to_yaml(entry: dict) -> str:
    return yaml.safe_dump(entry, sort_keys=False, allow_unicode=True, width=110)
