"""Versions a log reveals (torch, NCCL, CUDA, driver) and whether an entry's `applies_to` admits
them."""

from __future__ import annotations

from collections.abc import Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from bot.triage.fields import VERSION_FIELDS

SCAN_CHARS = 1 << 20  # versions print at start-up and in the final error: read head and tail only


def versions_of(text: str) -> dict[str, str]:
    """The first version of each component found in the head or tail of `text`."""
    found: dict[str, str] = {}
    parts = (text,) if len(text) <= 2 * SCAN_CHARS else (text[:SCAN_CHARS], text[-SCAN_CHARS:])
    for part in parts:
        for key, regex in VERSION_FIELDS:
            if key not in found and (m := regex.search(part)):
                found[key] = next(g for g in m.groups() if g)
    return found


def mismatches(applies_to: Mapping[str, str], versions: Mapping[str, str]) -> list[str]:
    """Why the entry cannot apply to these versions ("torch 2.4.0 is not >=2.6"); empty if it can
    or if the log does not say."""
    out: list[str] = []
    for component, spec in applies_to.items():
        seen = versions.get(component)
        if not seen:
            continue
        try:
            version = Version(seen)
            if not SpecifierSet(spec).contains(Version(version.base_version), prereleases=True):
                out.append(f"{component} {seen} is not {spec}")
        except (InvalidVersion, InvalidSpecifier):
            continue  # an unreadable version or range says nothing either way
    return out
