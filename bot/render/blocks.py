"""Render diagnoses, entries and the App Home as Block Kit, always with a text fallback.

Pure functions of their inputs: no Slack calls, no pipeline imports. Limits come from
bot.render.slack_limits. Button values are small JSON objects the Slack handlers parse back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.model import Candidate, Diagnosis, Triage
from bot.render import slack_limits as lim
from bot.render.text import USER_CODE_TIPS, first_sentences, location
from bot.store.base import NONE_OF_THESE
from kb.schema import Entry

# action_ids the Slack handlers register; buttons that repeat in one message get a numeric suffix.
ACTION_HELPFUL = "feedback_helpful"
ACTION_WRONG = "feedback_wrong"
ACTION_WHY = "why_this_match"
ACTION_SIBLINGS = "show_siblings"
ACTION_SHOW_ENTRY = "show_entry"  # + "_<n>"; value: the entry id
ACTION_SHARE = "share_in_channel"
FEEDBACK_MODAL = "feedback_modal"  # callback_id of the 👎 modal
BLOCK_PICK = "pick_entry"
BLOCK_TYPED = "typed_entry"
BLOCK_SEARCH = "search_entry_block"
ACTION_SEARCH_ENTRY = "search_entry"  # external select over every entry (block_suggestion)
MIN_SEARCH_CHARS = 2

SHOW_ENTRY_PATTERN = re.compile(rf"^{ACTION_SHOW_ENTRY}(_\d+)?$")
EVIDENCE_LINE_CHARS = 160
MAX_EVIDENCE_LINES = 4
MAX_SIBLING_BUTTONS = 5
RUNNER_UP_MIN = 0.05


@dataclass(frozen=True)
class Message:
    """What chat.postMessage / chat.update / respond() take: the fallback text and the blocks."""

    text: str
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


# -- small Block Kit builders -------------------------------------------------------------------


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": text}


def header(text: str) -> dict[str, Any]:
    return {
        "type": "header",
        "text": {"type": "plain_text", "text": lim.clip(text, lim.MAX_HEADER_TEXT), "emoji": True},
    }


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(lim.clip(text, lim.MAX_SECTION_TEXT))}


def context(*texts: str) -> dict[str, Any]:
    return {
        "type": "context",
        "elements": [_mrkdwn(lim.clip(t, lim.MAX_CONTEXT_TEXT)) for t in texts[: lim.MAX_CONTEXT_ELEMENTS] if t],
    }


def button(text: str, action_id: str, value: str | dict[str, Any], *, style: str | None = None) -> dict[str, Any]:
    raw = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    out: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": lim.clip(text, lim.MAX_BUTTON_TEXT), "emoji": True},
        "action_id": lim.clip(action_id, lim.MAX_ACTION_ID),
        "value": lim.clip(raw, lim.MAX_BUTTON_VALUE),
    }
    if style:
        out["style"] = style
    return out


def actions(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "elements": list(elements[: lim.MAX_ACTIONS_ELEMENTS])}


def escape(text: str) -> str:
    """Slack mrkdwn escaping: only &, < and > are special."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, title: str) -> str:
    return f"<{url}|{escape(title).replace('|', '/')}>"


# -- answers ------------------------------------------------------------------------------------


def feedback_value(ref: str, diagnosis: Diagnosis) -> dict[str, Any]:
    """What 👍/👎 need later even if the stored record is gone: the answer's ref and top five ids."""
    best = diagnosis.best
    return {"ref": ref, "entry": best.id if best else "", "top": [c.id for c in diagnosis.results[:5]]}


def render_diagnosis(diagnosis: Diagnosis, *, ref: str = "", titles: Mapping[str, str] | None = None) -> Message:
    """The threaded answer: a match (§5b), a harmless warning, a bug in the user's code, or an
    abstention, with feedback buttons and a fallback text."""
    if diagnosis.verdict == "match" and diagnosis.best is not None:
        return _render_match(diagnosis, diagnosis.best, ref, titles or {})
    if diagnosis.verdict == "benign" and diagnosis.best is not None:
        return _render_benign(diagnosis, diagnosis.best, ref)
    if diagnosis.verdict == "user-code" and diagnosis.user_frame is not None:
        return _render_user_code(diagnosis, ref)
    return _render_abstain(diagnosis, ref)


def harmless_line(diagnosis: Diagnosis) -> str:
    """The benign warnings also present in a log answered otherwise, folded into one line."""
    if not diagnosis.harmless:
        return ""
    names = ", ".join(f"{escape(lim.clip(c.title, 80))}" for c in diagnosis.harmless[:5])
    return f"Also in this log (harmless): {names}"


def _feedback_buttons(ref: str, diagnosis: Diagnosis) -> list[dict[str, Any]]:
    value = feedback_value(ref, diagnosis)
    return [button("👍 Helpful", ACTION_HELPFUL, value), button("👎 Wrong", ACTION_WRONG, value)]


def _render_benign(diagnosis: Diagnosis, best: Candidate, ref: str) -> Message:
    """A known-harmless warning: what it means, when it would matter, how to silence it. Never
    shaped like a root cause: no "Why/Fix/Confirm", no confidence headline."""
    entry = best.entry
    blocks: list[dict[str, Any]] = [header(f"Harmless: {entry.title}")]
    bits = ["*known-harmless warning*", _matched_line(best)]
    blocks.append(context(" · ".join(b for b in bits if b)))
    blocks.append(section(f"*What it means:* {escape(first_sentences(entry.root_cause[0]))}"))
    blocks.append(section("*When it would matter:*\n" + lim.clip_lines((f"• {escape(w)}" for w in entry.when_it_matters), lim.MAX_SECTION_TEXT - 30)))
    blocks.append(section("*To silence it:*\n" + numbered(entry.fix)))
    others = diagnosis.results[1:]
    if others:
        blocks.append(context("Also harmless here: " + ", ".join(escape(lim.clip(c.title, 80)) for c in others[:4])))
    blocks.append(actions(*_feedback_buttons(ref, diagnosis)))
    blocks.append(context(*_footer(entry, "")))
    text = f"Harmless: {entry.title}. {entry.summary}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))




def _render_user_code(diagnosis: Diagnosis, ref: str) -> Message:
    frame = diagnosis.user_frame
    assert frame is not None
    blocks: list[dict[str, Any]] = [header("Looks like a bug in your code")]
    where = f"`{escape(lim.clip(frame.where, 300))}` in `{escape(lim.clip(frame.function, 100))}`"
    exc = escape(lim.clip(frame.exception + (f": {frame.message}" if frame.message else ""), 1500))
    blocks.append(section(f"{where}\n`{exc}`"))
    blocks.append(section("\n".join(f"• {t}" for t in USER_CODE_TIPS)))
    line = harmless_line(diagnosis)
    if line:
        blocks.append(context(line))
    elements = _feedback_buttons(ref, diagnosis) if diagnosis.results else [button("👍 Helpful", ACTION_HELPFUL, feedback_value(ref, diagnosis))]
    blocks.append(actions(*elements))
    if diagnosis.results:
        blocks.append(context("Not it? Nearest entries: " + ", ".join(escape(lim.clip(c.title, 60)) for c in diagnosis.results[:3])))
    text = f"Looks like a bug in your code: {frame.headline()}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


def _confidence(value: float) -> str:
    return f"confidence {value:.2f}"


def _matched_line(candidate: Candidate) -> str:
    hits = candidate.why.fingerprints
    if not hits:
        return ""
    hit = hits[0]
    return f"matched `{escape(hit.excerpt(120).strip())}` ({location(hit.file, hit.line)})"


def _runner_up(diagnosis: Diagnosis) -> str:
    if len(diagnosis.results) < 2 or diagnosis.results[1].confidence < RUNNER_UP_MIN:
        return ""  # a runner-up at ~0 is noise, not information
    second = diagnosis.results[1]
    return f"runner-up: {escape(lim.clip(second.title, 80))} ({second.confidence:.2f})"


def _evidence_lines(candidate: Candidate) -> list[str]:
    seen: set[tuple[str | None, int]] = set()
    lines = []
    for hit in candidate.why.fingerprints:
        if (hit.file, hit.line) in seen:
            continue
        seen.add((hit.file, hit.line))
        lines.append(f"{location(hit.file, hit.line)}: " + hit.excerpt(EVIDENCE_LINE_CHARS).strip())
        if len(lines) == MAX_EVIDENCE_LINES:
            break
    return lines


def triage_line(triage: Triage | None) -> str:
    if triage is None:
        return ""
    if triage.summary:
        init = triage.initiating
        return triage.summary + (f" · first error at {location(init.file, init.line)}" if init else "")
    if triage.no_single_initiator:
        return "all ranks failed at about the same time: no single initiating rank"
    init = triage.initiating
    if init is None:
        return ""
    where = f"rank {init.rank}" if init.rank is not None else "the first failing process"
    if init.node:
        where += f" on {init.node}"
    tail = f" · {len(triage.collateral_ranks)} ranks collateral" if triage.collateral_ranks else ""
    return f"{where} failed first ({location(init.file, init.line)}){tail}"


def why_context(candidate: Candidate) -> str:
    """One line saying why the entry matched: which evidence, how strongly."""
    parts = []
    strong = [h for h in candidate.why.fingerprints if h.strength == "strong"]
    supporting = [h for h in candidate.why.fingerprints if h.strength != "strong"]
    if strong:
        parts.append(f"{len(strong)} strong fingerprint{'s' if len(strong) > 1 else ''}")
    if supporting:
        parts.append(f"{len(supporting)} supporting")
    parts.append(f"lexical {candidate.why.lexical:.2f}")
    parts.append(f"dense {candidate.why.dense:.2f}")
    return "Why it matched: " + ", ".join(parts)


def _render_match(diagnosis: Diagnosis, best: Candidate, ref: str, titles: Mapping[str, str]) -> Message:
    entry = best.entry
    blocks: list[dict[str, Any]] = [header(entry.title)]
    verdict_bits = [f"*{_confidence(diagnosis.confidence)}*", _matched_line(best), _runner_up(diagnosis)]
    blocks.append(context(" · ".join(b for b in verdict_bits if b)))
    initiating = triage_line(diagnosis.triage)
    if initiating:
        blocks.append(section(f"*Initiating:* {escape(initiating)}"))
    if harmless := harmless_line(diagnosis):
        blocks.append(context(harmless))
    blocks.append(section(f"*Why:* {escape(first_sentences(entry.root_cause[0]))}"))
    blocks.append(section("*Fix:*\n" + numbered(entry.fix)))
    blocks.append(section(f"*Confirm:* {escape(entry.confirm[0])}"))
    evidence = _evidence_lines(best)
    if evidence:
        blocks.append(section("*Evidence:*\n" + lim.code_block(evidence, lim.MAX_SECTION_TEXT - 20)))
    value = feedback_value(ref, diagnosis)
    blocks.append(
        actions(
            button("👍 Helpful", ACTION_HELPFUL, value),
            button("👎 Wrong", ACTION_WRONG, value),
            button("Why this match", ACTION_WHY, {"ref": ref, "entry": best.id}),
            *([button("Show siblings", ACTION_SIBLINGS, entry.id)] if entry.siblings else []),
        )
    )
    sibling_buttons = sibling_buttons_for(entry, titles)
    if sibling_buttons:
        blocks.append(actions(*sibling_buttons))
    blocks.append(context(*_footer(entry, why_context(best))))
    text = f"{entry.title} ({_confidence(diagnosis.confidence)}): {entry.summary}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


def numbered(steps: Sequence[str], limit: int = lim.MAX_SECTION_TEXT - 20) -> str:
    return lim.clip_lines((f"{i}. {escape(step)}" for i, step in enumerate(steps, 1)), limit)


def sibling_buttons_for(entry: Entry, titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """One button per known sibling (unknown ids would lead nowhere)."""
    known = [s for s in entry.siblings if s in titles][:MAX_SIBLING_BUTTONS]
    return [button(lim.clip(titles[s], 60), f"{ACTION_SHOW_ENTRY}_{i}", s) for i, s in enumerate(known)]


def _footer(entry: Entry, why: str) -> list[str]:
    refs = " · ".join(link(r.url, lim.clip(r.title, 60)) for r in entry.references[:3])
    out = [why] if why else []
    if refs:
        out.append(f"References: {refs}")
    out.append(f"entry `{entry.id}`")
    return out


def paste_next(diagnosis: Diagnosis) -> str:
    """What evidence would let the next attempt decide."""
    if diagnosis.kind == "question":
        return (
            "Paste the log or traceback itself (or attach it as a file): exact error lines decide far "
            "better than a description."
        )
    tips = ["the first error of the first failing rank with ~50 lines before it"]
    triage = diagnosis.triage
    if triage is None or not triage.versions:
        tips.append("versions (`python -m torch.utils.collect_env`, `nvidia-smi`, NCCL version)")
    tips.append("for hangs or timeouts: the log with `NCCL_DEBUG=INFO` and `TORCH_DISTRIBUTED_DEBUG=DETAIL`")
    tips.append("`dmesg -T | tail -50` from the node (OOM kills, Xid errors)")
    return "*Paste next:*\n" + "\n".join(f"• {t}" for t in tips)


def _render_abstain(diagnosis: Diagnosis, ref: str) -> Message:
    nearest = diagnosis.results[:3]
    reason = diagnosis.abstain_reason or "no entry's evidence is strong enough"
    blocks: list[dict[str, Any]] = [
        header("No confident match"),
        context(f"*{_confidence(diagnosis.confidence)}* · {escape(reason)}"),
    ]
    initiating = triage_line(diagnosis.triage)
    if initiating:
        blocks.append(section(f"*Initiating:* {escape(initiating)}"))
    if nearest:
        lines = [
            f"• *{escape(c.title)}* ({c.confidence:.2f}): {escape(lim.clip(c.entry.summary, 200))}" for c in nearest
        ]
        blocks.append(section("*Nearest entries:*\n" + "\n".join(lines)))
    if harmless := harmless_line(diagnosis):
        blocks.append(context(harmless))
    blocks.append(section(paste_next(diagnosis)))
    elements = [button(lim.clip(c.title, 60), f"{ACTION_SHOW_ENTRY}_{i}", c.id) for i, c in enumerate(nearest)]
    if diagnosis.results:
        elements.append(button("Pick the right entry", ACTION_WRONG, feedback_value(ref, diagnosis)))
    if elements:
        blocks.append(actions(*elements))
    text = "No confident match. Nearest: " + "; ".join(f"{c.title} ({c.confidence:.2f})" for c in nearest)
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


# -- entries, why, siblings ---------------------------------------------------------------------


def render_entry(entry: Entry, *, titles: Mapping[str, str] | None = None, note: str = "") -> Message:
    """One entry in full (slash command with an entry id, a sibling button)."""
    blocks: list[dict[str, Any]] = [
        header(entry.title),
        context(f"`{entry.id}` · {entry.category}" + (f" · {note}" if note else "")),
    ]
    blocks.append(section(escape(entry.summary)))
    blocks.append(section(f"*Why:* {escape(first_sentences(entry.root_cause[0]))}"))
    blocks.append(section("*Fix:*\n" + numbered(entry.fix)))
    blocks.append(section(f"*Confirm:* {escape(entry.confirm[0])}"))
    sibling_buttons = sibling_buttons_for(entry, titles or {})
    if sibling_buttons:
        blocks.append(actions(*sibling_buttons))
    blocks.append(context(*_footer(entry, "")))
    return Message(
        text=lim.clip(f"{entry.title}: {entry.summary}", lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks)
    )


def render_why(payload: Mapping[str, Any], entry_id: str) -> Message:
    """'Why this match' from a stored Diagnosis.to_json(): evidence lines, retriever scores, runner-up."""
    results = payload.get("results", [])
    chosen = next((r for r in results if r.get("id") == entry_id), None)
    if chosen is None:
        return Message(text="The details of this answer are no longer stored; ask again to see them.")
    why = chosen.get("why", {})
    hits = why.get("fingerprints", [])
    blocks: list[dict[str, Any]] = [
        section(f"*Why `{entry_id}` matched* ({_confidence(chosen.get('confidence', 0.0))})")
    ]
    if hits:
        lines = [f"{h['line']:>5}: {lim.clip(h['text'].strip(), EVIDENCE_LINE_CHARS)}" for h in hits[:8]]
        patterns = "\n".join(f"• `{escape(lim.clip(h['pattern'], 150))}`" for h in hits[:5])
        blocks.append(section("*Fingerprints that hit:*\n" + patterns))
        blocks.append(section("*Matched lines:*\n" + lim.code_block(lines, lim.MAX_SECTION_TEXT - 30)))
    else:
        blocks.append(section("No exact fingerprint hit: the match rests on wording similarity."))
    scores = f"lexical {why.get('lexical', 0.0):.2f} · dense {why.get('dense', 0.0):.2f} · score {chosen.get('score', 0.0):.2f}"
    others = [r for r in results if r.get("id") != entry_id][:2]
    runner = " · ".join(f"{escape(r['title'])} ({r.get('confidence', 0.0):.2f})" for r in others)
    blocks.append(context(scores, f"Runner-up: {runner}" if runner else ""))
    summary = (payload.get("triage") or {}).get("summary")
    if summary:
        blocks.append(context(f"Triage: {escape(summary)}"))
    return Message(text=f"Why {entry_id} matched: {scores}", blocks=blocks)


def render_siblings(entry: Entry, siblings: Sequence[Entry]) -> Message:
    if not siblings:
        return Message(text=f"No sibling entries of {entry.id} are in this knowledge base yet.")
    lines = [f"• *{escape(s.title)}* (`{s.id}`): {escape(lim.clip(s.summary, 220))}" for s in siblings]
    blocks = [
        section(f"*Related to* _{escape(entry.title)}_ — easy to confuse with:"),
        section(lim.clip_lines(lines, lim.MAX_SECTION_TEXT)),
        actions(*[button(lim.clip(s.title, 60), f"{ACTION_SHOW_ENTRY}_{i}", s.id) for i, s in enumerate(siblings[:5])]),
    ]
    return Message(text="Siblings: " + ", ".join(s.id for s in siblings), blocks=blocks)


def with_share_button(message: Message, value: Mapping[str, Any]) -> Message:
    """An ephemeral slash-command answer plus a button that posts it in the channel."""
    share = actions(button("Share in channel", ACTION_SHARE, dict(value), style="primary"))
    return Message(text=message.text, blocks=lim.fit_blocks([*message.blocks, share]))


def strip_interactive(message: Message) -> Message:
    """The same answer without buttons (what 'Share in channel' posts when no answer ref exists)."""
    return Message(text=message.text, blocks=[b for b in message.blocks if b.get("type") != "actions"])


# -- help, errors, App Home, modal --------------------------------------------------------------

USAGE = (
    "*How to use traindoc*\n"
    "• Paste a traceback or log in a channel and mention @traindoc in the same message, or mention it "
    "in the thread of a failing job's log.\n"
    "• DM me a log, a traceback or a question; attach long logs as `.log`, `.txt` or `.gz` files.\n"
    "• `/traindoc <error text or question>` answers only you; `/traindoc <entry-id>` shows an entry.\n"
    "• 👍 / 👎 on an answer teach the team which entries help."
)


def render_help(note: str = "") -> Message:
    blocks = ([section(escape(note))] if note else []) + [section(USAGE)]
    return Message(
        text=(note + "\n" if note else "") + "Paste a log or traceback and mention @traindoc.", blocks=blocks
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
    counts = " · ".join(f"{cat} {n}" for cat, n in sorted(by_category.items(), key=lambda kv: (-kv[1], kv[0])))
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
        blocks.append(section("*Recent diagnoses in this workspace:*\n" + lim.clip_lines(lines, lim.MAX_SECTION_TEXT)))
    else:
        blocks.append(section("*Recent diagnoses:* none yet."))
    return {"type": "home", "blocks": lim.fit_blocks(blocks, lim.MAX_BLOCKS_HOME)}


def render_feedback_modal(top: Sequence[tuple[str, str]], private_metadata: str) -> dict[str, Any]:
    """👎: pick the right entry among the runner-ups, search all entries, or say none of them fits."""
    options = [
        {
            "text": {"type": "plain_text", "text": lim.clip(title, lim.MAX_OPTION_TEXT)},
            "value": lim.clip(entry_id, lim.MAX_OPTION_VALUE),
        }
        for entry_id, title in top[:5]
    ]
    options.append({"text": {"type": "plain_text", "text": "None of these"}, "value": NONE_OF_THESE})
    blocks: list[dict[str, Any]] = [
        section("Which entry is the right answer? Pick a candidate, search all entries, or choose *None of these*."),
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
    found = [e for e in entries if all(w in f"{e.id} {e.title} {' '.join(e.tags)}".lower() for w in words)]
    return [
        {
            "text": {"type": "plain_text", "text": lim.clip(e.title, lim.MAX_OPTION_TEXT)},
            "value": lim.clip(e.id, lim.MAX_OPTION_VALUE),
        }
        for e in found[: lim.MAX_OPTIONS]
    ]
