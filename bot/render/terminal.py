"""Render a Diagnosis for a terminal with rich: verdict first, evidence under it, fix before background."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.model import Candidate, Diagnosis
from bot.render.text import USER_CODE_TIPS, first_sentences, location
from kb.schema import Entry

MAX_EVIDENCE_LINES = 4


def _numbered(title: str, items: tuple[str, ...], style: str) -> RenderableType:
    body = Text()
    body.append(f"{title}\n", style=style)
    for n, item in enumerate(items, 1):
        body.append(f"  {n}. ", style="dim")
        body.append(f"{item}\n")
    return body


def _evidence(candidate: Candidate) -> Text:
    out = Text()
    lines = {(hit.file, hit.line): hit for hit in candidate.why.fingerprints}  # several patterns may hit one line
    for hit in list(lines.values())[:MAX_EVIDENCE_LINES]:
        out.append(f"  {location(hit.file, hit.line)}: ", style="dim")
        out.append(f"{hit.text}\n", style="yellow")
    if not candidate.why.fingerprints:
        out.append("  no fingerprint matched: ranked by text similarity ", style="dim")
    out.append(f"  lexical {candidate.why.lexical:.2f} · dense {candidate.why.dense:.2f}\n", style="dim")
    return out


def _header(diagnosis: Diagnosis, best: Candidate) -> Text:
    head = Text()
    head.append(best.title, style="bold")
    head.append(f"   confidence {diagnosis.confidence:.2f}", style="green" if diagnosis.confidence >= 0.8 else "yellow")
    head.append(f"\n{best.id}", style="dim")
    if len(diagnosis.results) > 1:
        runner = diagnosis.results[1]
        head.append(f" · runner-up: {runner.title} ({runner.confidence:.2f})", style="dim")
    return head


def _triage_line(diagnosis: Diagnosis) -> RenderableType | None:
    triage = diagnosis.triage
    if triage is None or not (triage.summary or triage.initiating):
        return None
    text = Text("Initiating: ", style="bold magenta")
    text.append(triage.summary or triage.initiating.text)
    if triage.initiating is not None:
        text.append(f" · first error at {location(triage.initiating.file, triage.initiating.line)}", style="dim")
    return text


def _harmless(diagnosis: Diagnosis) -> Text | None:
    if not diagnosis.harmless:
        return None
    text = Text("Also in this log (harmless): ", style="bold dim")
    text.append(", ".join(c.title for c in diagnosis.harmless[:5]), style="dim")
    return text


def render_match(diagnosis: Diagnosis) -> RenderableType:
    best = diagnosis.results[0]
    entry: Entry = best.entry
    parts: list[RenderableType] = [_header(diagnosis, best)]
    if (line := _triage_line(diagnosis)) is not None:
        parts.append(line)
    if (harmless := _harmless(diagnosis)) is not None:
        parts.append(harmless)
    parts.append(_evidence(best))
    parts.append(Text.assemble(("Why: ", "bold"), first_sentences(entry.root_cause[0])))
    parts.append(_numbered("Fix:", entry.fix, "bold green"))
    parts.append(_numbered("Confirm:", entry.confirm, "bold cyan"))
    footer = Text()
    if entry.siblings:
        footer.append("Siblings: ", style="bold")
        footer.append(", ".join(entry.siblings) + "\n", style="dim")
    footer.append_text(_references(entry))
    parts.append(footer)
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="green")


def _references(entry: Entry) -> Text:
    refs = Text()
    for ref in entry.references:
        refs.append(f"  {ref.title}: ", style="dim")
        refs.append(f"{ref.url}\n", style="blue underline")
    return refs


def render_abstain(diagnosis: Diagnosis) -> RenderableType:
    parts: list[RenderableType] = [
        Text("No confident match", style="bold yellow"),
        Text(f"({diagnosis.abstain_reason})", style="dim") if diagnosis.abstain_reason else Text(""),
    ]
    if diagnosis.results:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        table.add_column("nearest entries")
        table.add_column("conf", justify="right")
        table.add_column("summary")
        for candidate in diagnosis.results[:3]:
            table.add_row(candidate.id, f"{candidate.confidence:.2f}", candidate.entry.summary[:110])
        parts.append(table)
    if (line := _triage_line(diagnosis)) is not None:
        parts.append(line)
    if (harmless := _harmless(diagnosis)) is not None:
        parts.append(harmless)
    parts.append(
        Padding(
            Text(
                "Paste more next: the full traceback with its last exception line, the first error of the "
                "failing rank (not the later NCCL timeouts), and the versions (torch, NCCL, CUDA, driver).",
                style="dim",
            ),
            (1, 0, 0, 0),
        )
    )
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="yellow")


def render_benign(diagnosis: Diagnosis) -> RenderableType:
    """A known-harmless warning: never shaped like a root cause."""
    best = diagnosis.results[0]
    entry: Entry = best.entry
    head = Text("Harmless: ", style="bold blue")
    head.append(entry.title, style="bold")
    head.append(f"\n{entry.id} · known-harmless warning", style="dim")
    parts: list[RenderableType] = [head]
    lines = {hit.line: hit for hit in best.why.fingerprints}
    for hit in list(lines.values())[:MAX_EVIDENCE_LINES]:
        parts.append(Text.assemble((f"  line {hit.line}: ", "dim"), (hit.text, "yellow")))
    parts.append(Text.assemble(("What it means: ", "bold"), first_sentences(entry.root_cause[0])))
    parts.append(_numbered("When it would matter:", entry.when_it_matters, "bold yellow"))
    parts.append(_numbered("To silence it:", entry.fix, "bold"))
    if len(diagnosis.results) > 1:
        parts.append(Text("Also harmless here: " + ", ".join(c.title for c in diagnosis.results[1:5]), style="dim"))
    parts.append(_references(entry))
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="blue")


def render_user_code(diagnosis: Diagnosis) -> RenderableType:
    frame = diagnosis.user_frame
    assert frame is not None
    head = Text("Looks like a bug in your code: ", style="bold magenta")
    head.append(frame.headline(), style="bold")
    parts: list[RenderableType] = [head, Text(f"  {frame.where} in {frame.function}", style="dim")]
    parts += [Text(f"• {tip}") for tip in USER_CODE_TIPS]
    if (harmless := _harmless(diagnosis)) is not None:
        parts.append(harmless)
    if diagnosis.results:
        parts.append(Text("Not it? Nearest entries: " + ", ".join(c.id for c in diagnosis.results[:3]), style="dim"))
    return Panel(Group(*parts), title="traindoc", title_align="left", border_style="magenta")


def render(diagnosis: Diagnosis) -> RenderableType:
    if diagnosis.verdict == "match" and diagnosis.results:
        return render_match(diagnosis)
    if diagnosis.verdict == "benign" and diagnosis.results:
        return render_benign(diagnosis)
    if diagnosis.verdict == "user-code" and diagnosis.user_frame is not None:
        return render_user_code(diagnosis)
    return render_abstain(diagnosis)


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
