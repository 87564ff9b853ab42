"""Read entry YAML files from directory trees into validated Entry objects.

The bundled entries (or `root`) come first; a team's own trees (`extra`, TRAINDOC_KB_EXTRA) are
merged on top: same schema, ids must not collide unless the team entry declares `overrides`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kb.errors import KBLoadError
from kb.schema import Entry

BUNDLED_ENTRIES = Path(__file__).parent / "entries"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~5x faster cold start


@dataclass(frozen=True)
class KnowledgeBase:
    entries: tuple[Entry, ...]
    digest: str  # sha256 over the entry files' bytes: changes whenever any entry changes
    files: tuple[Path, ...] = ()  # the file each entry came from, in the order of `entries`

    def by_id(self) -> dict[str, Entry]:
        return {entry.id: entry for entry in self.entries}

    def ids(self) -> list[str]:
        return [entry.id for entry in self.entries]

    def file_of(self, entry_id: str) -> Path | None:
        for entry, path in zip(self.entries, self.files, strict=False):
            if entry.id == entry_id:
                return path
        return None


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
        raise ValueError(
            f"category {entry.category!r} differs from its folder {path.parent.name!r}"
        )
    return entry


def _read_tree(root: Path, digest: Any, problems: list[str], tag: str) -> list[tuple[Entry, Path]]:
    if not root.is_dir():
        problems.append(f"{root}: not a directory of entries")
        return []
    loaded: list[tuple[Entry, Path]] = []
    for path in entry_files(root):
        raw = path.read_bytes()
        digest.update(
            tag.encode() + path.relative_to(root).as_posix().encode() + b"\0" + raw + b"\0"
        )
        try:
            loaded.append((load_entry(path), path))
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(str(p) for p in err["loc"])
                problems.append(f"{path}: {where}: {err['msg']}")
        except (ValueError, yaml.YAMLError, UnicodeDecodeError) as exc:
            problems.append(f"{path}: {exc}")
    return loaded


def _merge(
    base: list[tuple[Entry, Path]], team: list[tuple[Entry, Path]], problems: list[str]
) -> list[tuple[Entry, Path]]:
    """Team entries join the base ones; an `overrides` replaces the bundled entry it names and
    siblings that pointed at the replaced id follow it."""
    merged = {entry.id: (entry, path) for entry, path in base}
    base_ids = set(merged)
    renamed: dict[str, str] = {}
    for entry, path in team:
        if entry.overrides is not None:
            if entry.overrides not in base_ids:
                problems.append(
                    f"{path}: overrides {entry.overrides!r}, which is not a bundled entry"
                )
                continue
            merged.pop(entry.overrides, None)
            renamed[entry.overrides] = entry.id
        if entry.id in merged:
            problems.append(
                f"duplicate id {entry.id}: {merged[entry.id][1]} and {path} (a team entry may "
                f"declare `overrides: {entry.id}`)"
            )
            continue
        merged[entry.id] = (entry, path)
    if not renamed:
        return list(merged.values())
    out: list[tuple[Entry, Path]] = []
    for entry, path in merged.values():
        siblings = tuple(
            dict.fromkeys(
                renamed.get(s, s) for s in entry.siblings if renamed.get(s, s) != entry.id
            )
        )
        out.append(
            (
                entry.model_copy(update={"siblings": siblings})
                if siblings != entry.siblings
                else entry,
                path,
            )
        )
    return out


def load_kb(
    root: Path | None = None, *, extra: Sequence[Path] = (), lenient: bool = False
) -> KnowledgeBase:
    """All entries under `root` (default: the bundled ones) plus the team trees in `extra`. Any
    broken file raises KBLoadError, unless `lenient`, where broken files are left out (authors
    checking work in progress)."""
    root = root or BUNDLED_ENTRIES
    problems: list[str] = []
    digest = hashlib.sha256()
    base = _read_tree(root, digest, problems, "")
    seen: dict[str, Path] = {}
    unique: list[tuple[Entry, Path]] = []
    for entry, path in base:
        if entry.id in seen:
            problems.append(f"duplicate id {entry.id}: {seen[entry.id]} and {path}")
            continue
        seen[entry.id] = path
        unique.append((entry, path))
    loaded = unique
    for k, tree in enumerate(extra):
        team = _read_tree(Path(tree), digest, problems, f"extra{k}:")
        loaded = _merge(loaded, team, problems)
    if problems and not lenient:
        raise KBLoadError(problems)
    return KnowledgeBase(
        tuple(e for e, _ in loaded), digest.hexdigest(), tuple(p for _, p in loaded)
    )
