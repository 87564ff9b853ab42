"""Remove secrets (tokens, keys, passwords) before anything is stored, logged or echoed.

One pass, linear time by construction: every rule is compiled into one multi-pattern scanner
(index.scanner: Hyperscan, RE2 where it is absent) that finds the lines holding a secret; only those
lines are rewritten, each with the RE2 regexes of the rules that hit it. No backtracking engine
ever sees user input.

The rules are detect-secrets' maintained plugin patterns (those the linear engines accept) plus
ours (bot/redact_rules.py) for what it lacks: fine-grained GitHub tokens, W&B/NGC/Databricks keys,
Azure SAS signatures, URL passwords, NAME=value pairs and dict/repr entries, .netrc passwords,
high-entropy values after credential words, and PEM private keys (masked to their END line or,
when the paste is cut before it, to the end of the key's base64 body).
"""

from __future__ import annotations

import threading

from bot.redact_rules import MASK, Rule, all_rules, is_key_body_line, usable_rules
from index.scanner import MultiScanner

__all__ = ["MASK", "redact"]

_lock = threading.Lock()
_compiled: tuple[tuple[Rule, ...], MultiScanner] | None = None


def _scanner() -> tuple[tuple[Rule, ...], MultiScanner]:
    global _compiled
    with _lock:
        if _compiled is None:
            from bot.settings import hyperscan_cache_dir

            # the compiled Hyperscan database is cached on disk: seconds to compile, milliseconds to
            # load
            cache = hyperscan_cache_dir()
            rules = all_rules()
            scanner = MultiScanner([r.scan_pattern for r in rules], cache_dir=cache)
            try:
                scanner.scan_offsets(b"warm up\n")  # compiles (or loads) the database now
            except Exception:  # noqa: BLE001 - hyperscan.error when Hyperscan is present: leave the refused rules out
                rules = usable_rules(rules)
                scanner = MultiScanner([r.scan_pattern for r in rules], cache_dir=cache)
            _compiled = (rules, scanner)
        return _compiled


def redact(text: str) -> str:
    """`text` with every secret replaced by [REDACTED] (unchanged, and not copied, when none
    is found)."""
    if not text:
        return text
    rules, scanner = _scanner()
    data = text.encode("utf-8", "surrogatepass")
    hits = scanner.scan_offsets(data)
    if not hits:
        return text
    # The lines that hold a hit (by byte offset of their start), and which rules hit each.
    lines: dict[int, tuple[int, set[int]]] = {}
    for rule_id, end in hits:
        start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
        if start not in lines:
            stop = data.find(b"\n", start)
            lines[start] = (len(data) if stop < 0 else stop, set())
        lines[start][1].add(rule_id)
    new: dict[int, tuple[int, str]] = {}  # line start -> (line end, replacement text)
    key_blocks: list[int] = []
    for start, (stop, rule_ids) in lines.items():
        hit = [rules[i] for i in sorted(rule_ids)]
        if any(r.key_block for r in hit):
            key_blocks.append(stop)
        line = data[start:stop].decode("utf-8", "surrogatepass")
        masked = _mask_line(line, hit)
        if masked != line:
            new[start] = (stop, masked)
    for stop in key_blocks:
        _mask_key_body(data, stop, new)
    if not new:
        return text
    out, pos = [], 0
    for start in sorted(new):
        stop, replacement = new[start]
        out.append(data[pos:start].decode("utf-8", "surrogatepass"))
        out.append(replacement)
        pos = stop
    out.append(data[pos:].decode("utf-8", "surrogatepass"))
    return "".join(out)


def _mask_line(line: str, rules: list[Rule]) -> str:
    spans: list[tuple[int, int]] = []
    for rule in rules:
        spans += rule.spans(line)
    if not spans:
        return line
    spans.sort()
    out, pos = [], 0
    for start, end in spans:
        if end <= pos:
            continue  # inside a span already masked
        start = max(start, pos)
        out.append(line[pos:start])
        out.append(MASK)
        pos = end
    out.append(line[pos:])
    return "".join(out)


def _mask_key_body(data: bytes, stop: int, new: dict[int, tuple[int, str]]) -> None:
    """A private key's lines after its BEGIN line (ending at `stop`): masked to the END line, or
    while they look like the key's base64 body when the paste is cut before END."""
    while stop < len(data):
        start = stop + 1
        stop = data.find(b"\n", start)
        stop = len(data) if stop < 0 else stop
        line = data[start:stop].decode("utf-8", "replace")
        if "-----END " in line:
            new[start] = (stop, MASK)
            return
        if not is_key_body_line(line):
            return
        new[start] = (stop, MASK)
