"""Render a Diagnosis for a terminal with rich: verdict first, evidence under it, fix before
background."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.model import Diagnosis
from bot.render.answer_view import AnswerView, answer_view
from bot.render.text import first_sentences, location, user_code_header, user_code_tips
from kb.schema import Entry


def _numbered(title: str, items: tuple[str, ...], style: str) -> RenderableType:
    body = Text()
    body.append(f"{title}\n", style=style)
    for n, item in enumerate(items, 1):
        body.append(f"  {n}. ", style="dim")
        body.append(f"{item}\n")
    return body


def _evidence(view: AnswerView) -> Text:
    out = Text()
    assert view.best is not None
    for hit in view.evidence:
        out.append(f"  {location(hit.file, hit.line)}: ", style="dim")
        out.append(f"{hit.text}\n", style="yellow")
    if not view.best.why.fingerprints:
        out.append("  no fingerprint matched: ranked by text similarity ", style="dim")
    out.append(
        f"  lexical {view.best.why.lexical:.2f} · dense {view.best.why.dense:.2f}\n", style="dim"
    )
    return out


def _header(view: AnswerView) -> Text:
    assert view.best is not None
    head = Text()
    head.append(view.best.title, style="bold")
    head.append(
        f"   confidence {view.confidence:.2f}",
        style="green" if view.confidence >= 0.8 else "yellow",
    )
    head.append(f"\n{view.best.id}", style="dim")
    if view.runner_up is not None:
        head.append(
            f" · runner-up: {view.runner_up.title} ({view.runner_up.confidence:.2f})", style="dim"
        )
    return head


def _triage_line(view: AnswerView) -> RenderableType | None:
    if not view.initiating:
        return None
    return Text.assemble(("Initiating: ", "bold magenta"), view.initiating)


def _harmless(view: AnswerView) -> Text | None:
    if not view.harmless:
        return None
    text = Text("Also in this log (harmless): ", style="bold dim")
    text.append(", ".join(c.title for c in view.harmless), style="dim")
    return text


def _context_lines(view: AnswerView) -> list[RenderableType]:
    """The initiating rank and the folded harmless warnings, when there are any."""
    return [line for line in (_triage_line(view), _harmless(view)) if line is not None]


def render_match(view: AnswerView) -> RenderableType:
    assert view.best is not None
    entry: Entry = view.best.entry
    parts: list[RenderableType] = [_header(view), *_context_lines(view)]
    parts.append(_evidence(view))
    parts.append(Text.assemble(("Why: ", "bold"), first_sentences(entry.root_cause[0])))
    parts.append(_numbered("Fix:", entry.fix, "bold green"))
    parts.append(_numbered("Confirm:", entry.confirm, "bold cyan"))
    footer = Text()
    if view.siblings:
        footer.append("Siblings: ", style="bold")
        footer.append(", ".join(view.siblings) + "\n", style="dim")
    footer.append_text(_references(entry))
    parts.append(footer)
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="green")


def _references(entry: Entry) -> Text:
    refs = Text()
    for ref in entry.references:
        refs.append(f"  {ref.title}: ", style="dim")
        refs.append(f"{ref.url}\n", style="blue underline")
    return refs


def render_abstain(view: AnswerView) -> RenderableType:
    diagnosis = view.diagnosis
    parts: list[RenderableType] = [
        Text("No confident match", style="bold yellow"),
        Text(f"({diagnosis.abstain_reason})", style="dim")
        if diagnosis.abstain_reason
        else Text(""),
    ]
    if view.nearest:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("nearest entries")
        table.add_column("conf", justify="right")
        table.add_column("summary")
        for candidate in view.nearest:
            table.add_row(
                candidate.id, f"{candidate.confidence:.2f}", candidate.entry.summary[:110]
            )
        parts.append(table)
    parts += _context_lines(view)
    tips = Text("Paste next:", style="bold dim")
    for tip in view.paste_next:
        tips.append(f"\n  • {tip}", style="dim")
    parts.append(Padding(tips, (1, 0, 0, 0)))
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="yellow")


def render_benign(view: AnswerView) -> RenderableType:
    """A known-harmless warning: never shaped like a root cause."""
    assert view.best is not None
    entry: Entry = view.best.entry
    head = Text("Harmless: ", style="bold blue")
    head.append(entry.title, style="bold")
    head.append(f"\n{entry.id} · known-harmless warning", style="dim")
    parts: list[RenderableType] = [head]
    for hit in view.evidence:
        parts.append(
            Text.assemble((f"  {location(hit.file, hit.line)}: ", "dim"), (hit.text, "yellow"))
        )
    parts.append(Text.assemble(("What it means: ", "bold"), first_sentences(entry.root_cause[0])))
    parts.append(_numbered("When it would matter:", entry.when_it_matters, "bold yellow"))
    parts.append(_numbered("To silence it:", entry.fix, "bold"))
    if view.also_harmless:
        parts.append(
            Text(
                "Also harmless here: " + ", ".join(c.title for c in view.also_harmless), style="dim"
            )
        )
    parts.append(_references(entry))
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="blue")


def render_user_code(view: AnswerView) -> RenderableType:
    frame = view.user_frame
    assert frame is not None
    head = Text(f"{user_code_header(frame.kind)}: ", style="bold magenta")
    head.append(frame.headline(), style="bold")
    parts: list[RenderableType] = [head, Text(f"  {frame.where} in {frame.function}", style="dim")]
    parts += [Text(f"• {tip}") for tip in user_code_tips(frame.kind)]
    if (harmless := _harmless(view)) is not None:
        parts.append(harmless)
    if view.nearest:
        parts.append(
            Text("Not it? Nearest entries: " + ", ".join(c.id for c in view.nearest), style="dim")
        )
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="magenta")


def render(diagnosis: Diagnosis) -> RenderableType:
    """A diagnosis for the terminal, drawn from the same view as the Slack answer."""
    view = answer_view(diagnosis)
    if view.shown == "match":
        return render_match(view)
    if view.shown == "benign":
        return render_benign(view)
    if view.shown == "user-code":
        return render_user_code(view)
    return render_abstain(view)


def render_entry(entry: Entry) -> RenderableType:
    parts: list[RenderableType] = [
        Text.assemble((entry.title, "bold"), (f"\n{entry.id} · {entry.category}", "dim")),
        Text(entry.summary),
        _numbered("Symptoms:", entry.symptoms, "bold"),
        Text.assemble(("Why: ", "bold"), " ".join(entry.root_cause)),
        _numbered("Fix:", entry.fix, "bold green"),
        _numbered("Confirm:", entry.confirm, "bold cyan"),
    ]
    if entry.prevention:
        parts.append(_numbered("Prevention:", entry.prevention, "bold"))
    fps = Text("Fingerprints:\n", style="bold")
    for fp in entry.fingerprints:
        fps.append(f"  [{fp.strength}] ", style="dim")
        fps.append(f"{fp.pattern}\n", style="yellow")
    parts.append(fps)
    refs = Text("References:\n", style="bold")
    for ref in entry.references:
        refs.append(f"  {ref.title}: {ref.url}\n")
    parts.append(refs)
    if entry.siblings:
        parts.append(Text.assemble(("Siblings: ", "bold"), ", ".join(entry.siblings)))
    return Panel(Group(*parts), title="traindoc kb show", title_align="left")
