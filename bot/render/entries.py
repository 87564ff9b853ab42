"""Entries in Block Kit: one entry in full, "Why this match" from a stored answer (validated by
the JSON contract), an entry's siblings, and the share button of an ephemeral answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from bot.contract import StoredDiagnosis
from bot.render import slack_limits as lim
from bot.render.action_ids import ACTION_SHARE, ACTION_SHOW_ENTRY
from bot.render.answer import (
    EVIDENCE_LINE_CHARS,
    confidence_text,
    entry_footer,
    sibling_buttons,
)
from bot.render.blockkit import Message, actions, button, context, escape, header, numbered, section
from bot.render.text import first_sentences
from kb.schema import Entry


def render_entry(
    entry: Entry, *, titles: Mapping[str, str] | None = None, note: str = ""
) -> Message:
    """One entry in full (slash command with an entry id, a sibling button)."""
    blocks: list[dict[str, Any]] = [
        header(entry.title),
        context(f"`{entry.id}` · {entry.category}" + (f" · {note}" if note else "")),
    ]
    blocks.append(section(escape(entry.summary)))
    blocks.append(section(f"*Why:* {escape(first_sentences(entry.root_cause[0]))}"))
    blocks.append(section("*Fix:*\n" + numbered(entry.fix)))
    blocks.append(section(f"*Confirm:* {escape(entry.confirm[0])}"))
    if siblings := sibling_buttons(entry.siblings, titles or {}):
        blocks.append(actions(*siblings))
    blocks.append(context(*entry_footer(entry, "")))
    return Message(
        text=lim.clip(f"{entry.title}: {entry.summary}", lim.MAX_FALLBACK_TEXT),
        blocks=lim.fit_blocks(blocks),
    )


def render_why(payload: Mapping[str, Any], entry_id: str) -> Message:
    """'Why this match' from a stored Diagnosis.to_json(), validated by the JSON contract:
    evidence lines, retriever scores, runner-up."""
    gone = Message(text="The details of this answer are no longer stored; ask again to see them.")
    try:
        stored = StoredDiagnosis.model_validate(payload)
    except ValidationError:
        return gone
    chosen = next((r for r in stored.results if r.id == entry_id), None)
    if chosen is None:
        return gone
    hits = chosen.why.fingerprints
    blocks: list[dict[str, Any]] = [
        section(f"*Why `{entry_id}` matched* ({confidence_text(chosen.confidence)})")
    ]
    if hits:
        lines = [f"{h.line:>5}: {lim.clip(h.text.strip(), EVIDENCE_LINE_CHARS)}" for h in hits[:8]]
        patterns = "\n".join(f"• `{escape(lim.clip(h.pattern, 150))}`" for h in hits[:5])
        blocks.append(section("*Fingerprints that hit:*\n" + patterns))
        blocks.append(
            section("*Matched lines:*\n" + lim.code_block(lines, lim.MAX_SECTION_TEXT - 30))
        )
    else:
        blocks.append(section("No exact fingerprint hit: the match rests on wording similarity."))
    why = chosen.why
    scores = f"lexical {why.lexical:.2f} · dense {why.dense:.2f} · score {chosen.score:.2f}"
    others = [r for r in stored.results if r.id != entry_id][:2]
    runner = " · ".join(f"{escape(r.title)} ({r.confidence:.2f})" for r in others)
    blocks.append(context(scores, f"Runner-up: {runner}" if runner else ""))
    if stored.triage is not None and stored.triage.summary:
        blocks.append(context(f"Triage: {escape(stored.triage.summary)}"))
    return Message(text=f"Why {entry_id} matched: {scores}", blocks=blocks)


def render_siblings(entry: Entry, siblings: Sequence[Entry]) -> Message:
    if not siblings:
        return Message(text=f"No sibling entries of {entry.id} are in this knowledge base yet.")
    lines = [
        f"• *{escape(s.title)}* (`{s.id}`): {escape(lim.clip(s.summary, 220))}" for s in siblings
    ]
    buttons = [
        button(lim.clip(s.title, 60), f"{ACTION_SHOW_ENTRY}_{i}", s.id)
        for i, s in enumerate(siblings[:5])
    ]
    blocks = [
        section(f"*Related to* _{escape(entry.title)}_ — easy to confuse with:"),
        section(lim.clip_lines(lines, lim.MAX_SECTION_TEXT)),
        actions(*buttons),
    ]
    return Message(text="Siblings: " + ", ".join(s.id for s in siblings), blocks=blocks)


def with_share_button(message: Message, value: Mapping[str, Any]) -> Message:
    """An ephemeral slash-command answer plus a button that posts it in the channel."""
    share = actions(button("Share in channel", ACTION_SHARE, dict(value), style="primary"))
    return Message(text=message.text, blocks=lim.fit_blocks([*message.blocks, share]))


def strip_interactive(message: Message) -> Message:
    """The same answer without buttons (what 'Share in channel' posts when no answer ref exists)."""
    return Message(
        text=message.text, blocks=[b for b in message.blocks if b.get("type") != "actions"]
    )
