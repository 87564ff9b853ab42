"""The answer in Block Kit: a match, a harmless warning, a bug in the user's code or an abstention
(drawn from bot.render.answer_view), always with a text fallback. Pure functions of their
inputs: no Slack calls, no pipeline imports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.model import Candidate, Diagnosis
from bot.render import slack_limits as lim
from bot.render.action_ids import (
    ACTION_HELPFUL,
    ACTION_SHOW_ENTRY,
    ACTION_SIBLINGS,
    ACTION_WHY,
    ACTION_WRONG,
)
from bot.render.answer_view import AnswerView, answer_view
from bot.render.blockkit import (
    Message,
    actions,
    bullets,
    button,
    context,
    escape,
    header,
    link,
    numbered,
    section,
)
from bot.render.text import first_sentences, location, user_code_header, user_code_tips
from kb.schema import Entry

EVIDENCE_LINE_CHARS = 160
MAX_SIBLING_BUTTONS = 5


def feedback_value(ref: str, diagnosis: Diagnosis) -> dict[str, Any]:
    """What 👍/👎 need later even if the stored record is gone: the answer's ref and top five
    ids."""
    best = diagnosis.best
    return {
        "ref": ref,
        "entry": best.id if best else "",
        "top": [c.id for c in diagnosis.results[:5]],
    }


def render_diagnosis(
    diagnosis: Diagnosis, *, ref: str = "", titles: Mapping[str, str] | None = None
) -> Message:
    """The threaded answer: a match (§5b), a harmless warning, a bug in the user's code, or an
    abstention, with feedback buttons and a fallback text."""
    titles = titles or {}
    view = answer_view(diagnosis, titles=titles)
    if view.shown == "match":
        return _render_match(view, ref, titles)
    if view.shown == "benign":
        return _render_benign(view, ref)
    if view.shown == "user-code":
        return _render_user_code(view, ref)
    return _render_abstain(view, ref)


def harmless_line(view: AnswerView) -> str:
    """The benign warnings also present in a log answered otherwise, folded into one line."""
    if not view.harmless:
        return ""
    names = ", ".join(f"{escape(lim.clip(c.title, 80))}" for c in view.harmless)
    return f"Also in this log (harmless): {names}"


def _feedback_buttons(ref: str, diagnosis: Diagnosis) -> list[dict[str, Any]]:
    value = feedback_value(ref, diagnosis)
    return [button("👍 Helpful", ACTION_HELPFUL, value), button("👎 Wrong", ACTION_WRONG, value)]


def _render_benign(view: AnswerView, ref: str) -> Message:
    """A known-harmless warning: what it means, when it would matter, how to silence it. Never
    shaped like a root cause: no "Why/Fix/Confirm", no confidence headline."""
    assert view.best is not None
    entry = view.best.entry
    blocks: list[dict[str, Any]] = [header(f"Harmless: {entry.title}")]
    bits = ["*known-harmless warning*", _matched_line(view.best)]
    blocks.append(context(" · ".join(b for b in bits if b)))
    blocks.append(section(f"*What it means:* {escape(first_sentences(entry.root_cause[0]))}"))
    when = lim.clip_lines(
        (f"• {escape(w)}" for w in entry.when_it_matters), lim.MAX_SECTION_TEXT - 30
    )
    blocks.append(section("*When it would matter:*\n" + when))
    blocks.append(section("*To silence it:*\n" + numbered(entry.fix)))
    if view.also_harmless:
        names = ", ".join(escape(lim.clip(c.title, 80)) for c in view.also_harmless)
        blocks.append(context("Also harmless here: " + names))
    blocks.append(actions(*_feedback_buttons(ref, view.diagnosis)))
    blocks.append(context(*entry_footer(entry, "")))
    text = f"Harmless: {entry.title}. {entry.summary}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


def _render_user_code(view: AnswerView, ref: str) -> Message:
    frame = view.user_frame
    assert frame is not None
    diagnosis = view.diagnosis
    blocks: list[dict[str, Any]] = [header(user_code_header(frame.kind))]
    where = f"`{escape(lim.clip(frame.where, 300))}` in `{escape(lim.clip(frame.function, 100))}`"
    exc = escape(lim.clip(frame.exception + (f": {frame.message}" if frame.message else ""), 1500))
    blocks.append(section(f"{where}\n`{exc}`"))
    blocks.append(section(bullets(user_code_tips(frame.kind))))
    if line := harmless_line(view):
        blocks.append(context(line))
    if diagnosis.results:
        elements = _feedback_buttons(ref, diagnosis)
    else:
        elements = [button("👍 Helpful", ACTION_HELPFUL, feedback_value(ref, diagnosis))]
    blocks.append(actions(*elements))
    if view.nearest:
        names = ", ".join(escape(lim.clip(c.title, 60)) for c in view.nearest)
        blocks.append(context("Not it? Nearest entries: " + names))
    text = f"{user_code_header(frame.kind)}: {frame.headline()}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


def confidence_text(value: float) -> str:
    return f"confidence {value:.2f}"


def _matched_line(candidate: Candidate) -> str:
    hits = candidate.why.fingerprints
    if not hits:
        return ""
    hit = hits[0]
    return f"matched `{escape(hit.excerpt(120).strip())}` ({location(hit.file, hit.line)})"


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


def _render_match(view: AnswerView, ref: str, titles: Mapping[str, str]) -> Message:
    best = view.best
    assert best is not None
    entry = best.entry
    blocks: list[dict[str, Any]] = [header(entry.title)]
    runner = view.runner_up
    runner_up = (
        f"runner-up: {escape(lim.clip(runner.title, 80))} ({runner.confidence:.2f})"
        if runner
        else ""
    )
    verdict_bits = [f"*{confidence_text(view.confidence)}*", _matched_line(best), runner_up]
    blocks.append(context(" · ".join(b for b in verdict_bits if b)))
    if view.initiating:
        blocks.append(section(f"*Initiating:* {escape(view.initiating)}"))
    if harmless := harmless_line(view):
        blocks.append(context(harmless))
    blocks.append(section(f"*Why:* {escape(first_sentences(entry.root_cause[0]))}"))
    blocks.append(section("*Fix:*\n" + numbered(entry.fix)))
    blocks.append(section(f"*Confirm:* {escape(entry.confirm[0])}"))
    evidence = [
        f"{location(h.file, h.line)}: " + h.excerpt(EVIDENCE_LINE_CHARS).strip()
        for h in view.evidence
    ]
    if evidence:
        blocks.append(
            section("*Evidence:*\n" + lim.code_block(evidence, lim.MAX_SECTION_TEXT - 20))
        )
    value = feedback_value(ref, view.diagnosis)
    blocks.append(
        actions(
            button("👍 Helpful", ACTION_HELPFUL, value),
            button("👎 Wrong", ACTION_WRONG, value),
            button("Why this match", ACTION_WHY, {"ref": ref, "entry": best.id}),
            *([button("Show siblings", ACTION_SIBLINGS, entry.id)] if entry.siblings else []),
        )
    )
    if siblings := sibling_buttons(view.siblings, titles):
        blocks.append(actions(*siblings))
    blocks.append(context(*entry_footer(entry, why_context(best))))
    text = f"{entry.title} ({confidence_text(view.confidence)}): {entry.summary}"
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))


def sibling_buttons(ids: Sequence[str], titles: Mapping[str, str]) -> list[dict[str, Any]]:
    """One button per sibling the knowledge base holds (unknown ids would lead nowhere)."""
    known = [s for s in ids if s in titles][:MAX_SIBLING_BUTTONS]
    return [
        button(lim.clip(titles[s], 60), f"{ACTION_SHOW_ENTRY}_{i}", s) for i, s in enumerate(known)
    ]


def entry_footer(entry: Entry, why: str) -> list[str]:
    refs = " · ".join(link(r.url, lim.clip(r.title, 60)) for r in entry.references[:3])
    out = [why] if why else []
    if refs:
        out.append(f"References: {refs}")
    out.append(f"entry `{entry.id}`")
    return out


def _render_abstain(view: AnswerView, ref: str) -> Message:
    diagnosis = view.diagnosis
    nearest = view.nearest
    blocks: list[dict[str, Any]] = [
        header("No confident match"),
        context(f"*{confidence_text(view.confidence)}* · {escape(view.reason)}"),
    ]
    if view.initiating:
        blocks.append(section(f"*Initiating:* {escape(view.initiating)}"))
    if nearest:
        lines = [
            f"• *{escape(c.title)}* ({c.confidence:.2f}): {escape(lim.clip(c.entry.summary, 200))}"
            for c in nearest
        ]
        blocks.append(section("*Nearest entries:*\n" + "\n".join(lines)))
    if harmless := harmless_line(view):
        blocks.append(context(harmless))
    if diagnosis.kind == "question":
        blocks.append(section(view.paste_next[0]))
    else:
        blocks.append(section("*Paste next:*\n" + bullets(view.paste_next)))
    elements = [
        button(lim.clip(c.title, 60), f"{ACTION_SHOW_ENTRY}_{i}", c.id)
        for i, c in enumerate(nearest)
    ]
    if diagnosis.results:
        elements.append(
            button("Pick the right entry", ACTION_WRONG, feedback_value(ref, diagnosis))
        )
    if elements:
        blocks.append(actions(*elements))
    text = "No confident match. Nearest: " + "; ".join(
        f"{c.title} ({c.confidence:.2f})" for c in nearest
    )
    return Message(text=lim.clip(text, lim.MAX_FALLBACK_TEXT), blocks=lim.fit_blocks(blocks))
