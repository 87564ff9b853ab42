"""The Slack views besides the answer: usage help, error and placeholder messages, the App Home
tab and the 👎 feedback modal with its entry search. Pure functions of their inputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.render import slack_limits as lim
from bot.render.action_ids import (
    ACTION_SEARCH_ENTRY,
    BLOCK_PICK,
    BLOCK_SEARCH,
    BLOCK_TYPED,
    FEEDBACK_MODAL,
)
from bot.render.blockkit import Message, context, escape, header, section
from bot.store.base import NONE_OF_THESE
from kb.schema import Entry

MIN_SEARCH_CHARS = 2

USAGE = (
    "*How to use traindoc*\n"
    "• Paste a traceback or log in a channel and mention @traindoc in the same message, or mention "
    "it "
    "in the thread of a failing job's log.\n"
    "• DM me a log, a traceback or a question; attach long logs as `.log`, `.txt` or `.gz` files.\n"
    "• `/traindoc <error text or question>` answers only you; `/traindoc <entry-id>` shows an "
    "entry.\n"
    "• 👍 / 👎 on an answer teach the team which entries help."
)


def render_help(note: str = "") -> Message:
    blocks = ([section(escape(note))] if note else []) + [section(USAGE)]
    return Message(
        text=(note + "\n" if note else "") + "Paste a log or traceback and mention @traindoc.",
        blocks=blocks,
    )


def render_error(text: str) -> Message:
    return Message(text=text, blocks=[section(f":warning: {escape(text)}")])


def render_placeholder() -> Message:
    return Message(text="Analysing… :eyes:", blocks=[context(":eyes: Analysing…")])


@dataclass(frozen=True)
class RecentDiagnosis:
    """What the App Home lists (a projection of a stored record)."""

    when: str
    title: str
    verdict: str
    confidence: float
    channel: str = ""


def render_home(entries: Iterable[Entry], recent: Sequence[RecentDiagnosis]) -> dict[str, Any]:
    """The App Home view: usage, KB size by category, the workspace's recent diagnoses."""
    by_category: dict[str, int] = {}
    total = 0
    for entry in entries:
        by_category[entry.category] = by_category.get(entry.category, 0) + 1
        total += 1
    counts = " · ".join(
        f"{cat} {n}" for cat, n in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    blocks: list[dict[str, Any]] = [
        header("traindoc"),
        section(USAGE),
        {"type": "divider"},
        section(f"*Knowledge base:* {total} entries"),
    ]
    if counts:
        blocks.append(context(counts))
    blocks.append({"type": "divider"})
    if recent:
        lines = [
            f"• {r.when} · *{escape(r.title)}* ({r.verdict}, {r.confidence:.2f})"
            + (f" in <#{r.channel}>" if r.channel.startswith("C") else "")
            for r in recent
        ]
        blocks.append(
            section(
                "*Recent diagnoses in this workspace:*\n"
                + lim.clip_lines(lines, lim.MAX_SECTION_TEXT)
            )
        )
    else:
        blocks.append(section("*Recent diagnoses:* none yet."))
    return {"type": "home", "blocks": lim.fit_blocks(blocks, lim.MAX_BLOCKS_HOME)}


def render_feedback_modal(top: Sequence[tuple[str, str]], private_metadata: str) -> dict[str, Any]:
    """👎: pick the right entry among the runner-ups, search all entries, or say none of them
    fits."""
    options = [
        {
            "text": {"type": "plain_text", "text": lim.clip(title, lim.MAX_OPTION_TEXT)},
            "value": lim.clip(entry_id, lim.MAX_OPTION_VALUE),
        }
        for entry_id, title in top[:5]
    ]
    options.append(
        {"text": {"type": "plain_text", "text": "None of these"}, "value": NONE_OF_THESE}
    )
    blocks: list[dict[str, Any]] = [
        section(
            "Which entry is the right answer? Pick a candidate, search all entries, or choose "
            "*None of these*."
        ),
        {
            "type": "input",
            "block_id": BLOCK_PICK,
            "optional": True,
            "label": {"type": "plain_text", "text": "One of the candidates"},
            "element": {"type": "static_select", "action_id": "value", "options": options},
        },
        {
            "type": "input",
            "block_id": BLOCK_SEARCH,
            "optional": True,
            "label": {"type": "plain_text", "text": "Or search every entry"},
            "element": {
                "type": "external_select",
                "action_id": ACTION_SEARCH_ENTRY,
                "min_query_length": MIN_SEARCH_CHARS,
                "placeholder": {"type": "plain_text", "text": "e.g. shm, watchdog, xid 79"},
            },
        },
        {
            "type": "input",
            "block_id": BLOCK_TYPED,
            "optional": True,
            "label": {"type": "plain_text", "text": "What it really was (optional)"},
            "element": {"type": "plain_text_input", "action_id": "value", "max_length": 300},
        },
    ]
    return {
        "type": "modal",
        "callback_id": FEEDBACK_MODAL,
        "title": {"type": "plain_text", "text": "Wrong answer"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "private_metadata": lim.clip(private_metadata, lim.MAX_PRIVATE_METADATA),
        "blocks": blocks,
    }


def render_entry_options(entries: Iterable[Entry], query: str) -> list[dict[str, Any]]:
    """The external select's options: entries whose id, title or tags contain every word typed."""
    words = query.lower().split()
    found = [
        e
        for e in entries
        if all(w in f"{e.id} {e.title} {' '.join(e.tags)}".lower() for w in words)
    ]
    return [
        {
            "text": {"type": "plain_text", "text": lim.clip(e.title, lim.MAX_OPTION_TEXT)},
            "value": lim.clip(e.id, lim.MAX_OPTION_VALUE),
        }
        for e in found[: lim.MAX_OPTIONS]
    ]
