"""Read entry YAML files from a directory tree into validated Entry objects."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from kb.schema import Entry

BUNDLED_ENTRIES = Path(__file__).parent / "entries"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~5x faster cold start


class KBLoadError(Exception):
    """One or more entry files could not be read or validated."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class KnowledgeBase:
    entries: tuple[Entry, ...]
    digest: str  # sha256 over the entry files' bytes: changes whenever any entry changes

    def by_id(self) -> dict[str, Entry]:
        return {entry.id: entry for entry in self.entries}

    def ids(self) -> list[str]:
        return [entry.id for entry in self.entries]


def entry_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.yaml"))


def load_entry(path: Path) -> Entry:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    if not isinstance(data, dict):
        raise ValueError("not a mapping")
    entry = Entry.model_validate(data)
    if entry.id != path.stem:
        raise ValueError(f"id {entry.id!r} differs from the file stem {path.stem!r}")
    if entry.category != path.parent.name:
        raise ValueError(f"category {entry.category!r} differs from its folder {path.parent.name!r}")
    return entry


def load_kb(root: Path | None = None, *, lenient: bool = False) -> KnowledgeBase:
    """All entries under `root` (default: the bundled ones). Any broken file raises KBLoadError,
    unless `lenient`, where broken files are left out (authors checking work in progress)."""
    root = root or BUNDLED_ENTRIES
    problems: list[str] = []
    entries: list[Entry] = []
    digest = hashlib.sha256()
    for path in entry_files(root):
        raw = path.read_bytes()
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + raw + b"\0")
        try:
            entries.append(load_entry(path))
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"])
                problems.append(f"{path}: {where}: {err['msg']}")
        except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    seen: dict[str, Path] = {}
    for entry in entries:
        if entry.id in seen:
            problems.append(f"duplicate id {entry.id}")
        seen[entry.id] = root
    if problems and not lenient:
        raise KBLoadError(problems)
    return KnowledgeBase(tuple(entries), digest.hexdigest())
