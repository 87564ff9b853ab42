"""The Block Kit limits Slack enforces, and the helpers that keep messages inside them.

Every Slack renderer clips through this module, so a limit changes in one place.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MAX_BLOCKS_MESSAGE = 50
MAX_BLOCKS_HOME = 100
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_TEXT = 2000  # per element
MAX_ACTIONS_ELEMENTS = 25
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_ACTION_ID = 255
MAX_BLOCK_ID = 255
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_OPTIONS = 100
MAX_FALLBACK_TEXT = 4000  # chat.postMessage truncates `text` beyond 40k; keep notifications short
MAX_PRIVATE_METADATA = 3000

ELLIPSIS = "…"


def clip(text: str, limit: int) -> str:
    """Text no longer than `limit` characters, marked with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + ELLIPSIS


def clip_lines(lines: Iterable[str], limit: int) -> str:
    """Join whole lines while they fit; mark the cut with an ellipsis line."""
    out: list[str] = []
    used = 0
    for line in lines:
        cost = len(line) + (1 if out else 0)  # the newline before it
        if used + cost > limit - 2:
            if not out:
                return clip(line, limit)
            out.append(ELLIPSIS)
            break
        out.append(line)
        used += cost
    return "\n".join(out)


def code_block(lines: Iterable[str], limit: int = MAX_SECTION_TEXT) -> str:
    """A ``` block whose lines cannot close the fence early, within `limit` characters."""
    body = clip_lines((line.replace("```", "ˋˋˋ") for line in lines), limit - 8)
    return f"```\n{body}\n```"


def fit_blocks(
    blocks: list[dict[str, Any]], limit: int = MAX_BLOCKS_MESSAGE
) -> list[dict[str, Any]]:
    """At most `limit` blocks; the last ones (actions, context) are kept, the middle is dropped."""
    if len(blocks) <= limit:
        return blocks
    tail = [b for b in blocks[-3:] if b.get("type") in ("actions", "context")]
    return blocks[: limit - len(tail)] + tail


def violations(blocks: list[dict[str, Any]], *, limit: int = MAX_BLOCKS_MESSAGE) -> list[str]:
    """Every Block Kit limit the blocks break (empty when Slack would accept them)."""
    problems: list[str] = []
    if len(blocks) > limit:
        problems.append(f"{len(blocks)} blocks > {limit}")
    for i, block in enumerate(blocks):
        kind = block.get("type")
        where = f"block {i} ({kind})"
        if len(block.get("block_id", "")) > MAX_BLOCK_ID:
            problems.append(f"{where}: block_id too long")
        if kind == "header" and len(block["text"]["text"]) > MAX_HEADER_TEXT:
            problems.append(f"{where}: header over {MAX_HEADER_TEXT}")
        if kind == "section":
            text = block.get("text", {}).get("text", "")
            if len(text) > MAX_SECTION_TEXT:
                problems.append(f"{where}: text {len(text)} > {MAX_SECTION_TEXT}")
            if not text and not block.get("fields"):
                problems.append(f"{where}: empty section")
        if kind == "context":
            elements = block.get("elements", [])
            if not elements or len(elements) > MAX_CONTEXT_ELEMENTS:
                problems.append(f"{where}: {len(elements)} context elements")
            problems += [
                f"{where}: context text too long"
                for e in elements
                if len(e.get("text", "")) > MAX_CONTEXT_TEXT
            ]
        if kind == "actions":
            elements = block.get("elements", [])
            if not elements or len(elements) > MAX_ACTIONS_ELEMENTS:
                problems.append(f"{where}: {len(elements)} action elements")
            for element in elements:
                problems += _element_violations(element, where)
        accessory = block.get("accessory")
        if accessory:
            problems += _element_violations(accessory, where)
    action_ids = [
        e.get("action_id") for b in blocks for e in b.get("elements", []) if e.get("action_id")
    ]
    if len(action_ids) != len(set(action_ids)):
        problems.append("duplicate action_id in one message")
    return problems


def _element_violations(element: dict[str, Any], where: str) -> list[str]:
    problems = []
    if len(element.get("action_id", "")) > MAX_ACTION_ID:
        problems.append(f"{where}: action_id too long")
    if element.get("type") == "button":
        if len(element["text"]["text"]) > MAX_BUTTON_TEXT:
            problems.append(f"{where}: button text too long")
        if len(element.get("value", "")) > MAX_BUTTON_VALUE:
            problems.append(f"{where}: button value too long")
    return problems
