"""The `traindoc` command: ask, diagnose, eval, kb lint/list/show/stats, index build, calibrate, serve."""

from __future__ import annotations

import difflib
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bot.bounded import iter_file, iter_path
from bot.ingest import IngestError, report_from_streams
from bot.settings import Settings

if TYPE_CHECKING:
    from bot.diagnose import Engine
    from kb.load import KnowledgeBase

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Diagnose ML training and inference failures.")
kb_app = typer.Typer(no_args_is_help=True, help="Inspect and check the knowledge base.")
index_app = typer.Typer(no_args_is_help=True, help="Build the retrieval index.")
app.add_typer(kb_app, name="kb")
app.add_typer(index_app, name="index")

out = Console()
err = Console(stderr=True)

EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> None:
    err.print(f"traindoc: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _engine(settings: Settings | None = None, kb: KnowledgeBase | None = None) -> Engine:
    from rich.progress import Progress

    from bot.diagnose import Engine
    from index.embed import ModelNotFoundError
    from kb.load import KBLoadError

    progress = Progress(transient=True, console=err)
    task = None

    def on_progress(done: int, total: int) -> None:
        nonlocal task
        if task is None:
            progress.start()
            task = progress.add_task("building the index", total=total)
        progress.update(task, completed=done)
        if done >= total:
            progress.stop()

    try:
        return Engine.from_settings(settings or Settings(), kb=kb, progress=on_progress)
    except KBLoadError as exc:
        fail(f"the knowledge base does not load:\n{exc}", 1)
    except ModelNotFoundError as exc:
        fail(str(exc), 1)
    raise AssertionError("unreachable")


def _emit(diagnosis, as_json: bool, *, with_table: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps(diagnosis.to_json(), ensure_ascii=False) + "\n")
        return
    from bot.render.terminal import render

    out.print(render(diagnosis))
    if with_table and diagnosis.triage is not None and diagnosis.triage.ranks_seen > 1:
        try:
            from bot.render.rank_table import rank_table
        except ImportError:
            return
        out.print(rank_table(diagnosis.triage))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question in plain words, or a pasted error line.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the DESIGN §4b JSON object.")] = False,
) -> None:
    """Answer a question from the failure encyclopedia."""
    from bot.ingest import build_report, normalize
    from bot.model import LogFile

    text = normalize(question)
    if not text.strip():
        fail("empty question: say what failed, e.g. traindoc ask \"why does dcp.save hang at 64 GPUs?\"")
    report = build_report([LogFile(name="<question>", text=text)])
    _emit(_engine().diagnose(report), as_json)


@app.command()
def diagnose(
    files: Annotated[list[str], typer.Argument(help="Log files (plain or .gz), or - for standard input.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the DESIGN §4b JSON object.")] = False,
) -> None:
    """Diagnose one or more log files (one per rank or node is fine)."""
    named: list[tuple[str, Iterable[bytes]]] = []
    for name in files:
        if name == "-":
            named.append(("<stdin>", iter_file(sys.stdin.buffer)))
            continue
        path = Path(name)
        if not path.is_file():
            fail(f"{name}: no such file")
        named.append((path.name, iter_path(path)))
    try:  # streamed within the byte budget: head and tail kept, gzip inflated as a stream
        report = report_from_streams(named)
    except IngestError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename or 'input'}: {exc.strerror}")
    _emit(_engine().diagnose(report), as_json, with_table=True)


@app.command("eval")
def eval_command(
    directory: Annotated[Path, typer.Argument(help="A directory of eval case YAML files.")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures to this file.")] = None,
    show_misses: Annotated[bool, typer.Option("--misses", help="List the cases the hybrid gets wrong.")] = False,
) -> None:
    """Score every retriever alone and the hybrid on labelled cases."""
    from rich.progress import track

    from bot.evaluate import EvalCaseError, evaluate, load_cases

    if not directory.is_dir():
        fail(f"{directory}: not a directory")
    try:
        cases = load_cases(directory)
    except EvalCaseError as exc:
        fail(str(exc))
    if not cases:
        fail(f"{directory}: no *.yaml cases")
    engine = _engine()
    progress = iter(track(range(len(cases)), description="evaluating", console=err, transient=True))
    results, outcomes = evaluate(engine, cases, progress=lambda: next(progress, None))
    next(progress, None)
    columns = ("top1", "top3", "mrr", "answered", "precision_answered", "p50_ms", "p95_ms")
    typer.echo(f"traindoc eval: {len(cases)} cases ({sum(c.kind == 'log' for c in cases)} logs)")
    typer.echo(f"{'retriever':12}" + "".join(f"{c:>20}" if c == "precision_answered" else f"{c:>10}" for c in columns))
    for name, figures in results.items():
        cells = "".join(
            f"{figures[c]:>20.3f}" if c == "precision_answered" else f"{figures[c]:>10.1f}" if c.endswith("_ms") else f"{figures[c]:>10.3f}"
            for c in columns
        )
        typer.echo(f"{name:12}{cells}")
    if show_misses:
        for case, outcome in zip(cases, outcomes["hybrid"]):
            if not outcome.ranked_ids or outcome.ranked_ids[0] not in case.accepted:
                got = outcome.ranked_ids[0] if outcome.ranked_ids else "-"
                out.print(f"miss {case.name}: want {case.label}, got {got} {'(abstained)' if not outcome.answered else ''}", markup=False)
    if json_out:
        json_out.write_text(json.dumps({"cases": len(cases), **results}, indent=1) + "\n")


@app.command()
def calibrate(
    directories: Annotated[list[Path], typer.Argument(help="Eval case directories to fit on, besides the KB's own samples and questions.")] = [],
    write: Annotated[bool, typer.Option("--write/--dry-run", help="Write index/calibration.json.")] = True,
) -> None:
    """Fit the confidence model on labelled cases (KB samples and questions, plus eval dirs)."""
    from bot.calibration_data import fit_calibration

    engine = _engine()
    calibrations, report = fit_calibration(engine, directories)
    typer.echo(report)
    if write:
        from index.calibrate import save_all

        save_all(calibrations)
        out.print("wrote index/calibration.json")


@index_app.command("build")
def index_build(force: Annotated[bool, typer.Option("--force", help="Rebuild even if current.")] = False) -> None:
    """Build (or rebuild) the dense index into the cache directory."""
    from index import store

    engine = _engine()
    reason = store.staleness(engine.index_dir, engine.kb, engine.embedder.id)
    if reason is None and not force:
        out.print(f"index is current: {engine.index_dir}")
        return
    manifest = engine.rebuild_index()
    out.print(
        f"built {engine.index_dir}: {len(manifest.entry_ids)} entries, {len(manifest.vector_entries)} vectors, "
        f"{manifest.dimension} dims, {manifest.built_seconds:.1f} s"
    )


def _kb_or_fail():
    from kb.load import KBLoadError, load_kb

    try:
        return load_kb(Settings().kb_dir)
    except KBLoadError as exc:
        fail(f"the knowledge base does not load:\n{exc}", 1)


@kb_app.command("lint")
def kb_lint(
    category: Annotated[str | None, typer.Option(help="Check the ranking of this category's samples only.")] = None,
    static_only: Annotated[bool, typer.Option("--static", help="Skip the retrieval checks.")] = False,
    lenient: Annotated[bool, typer.Option("--lenient", help="Leave out files that do not load (still reported) and check the rest.")] = False,
) -> None:
    """Fail on schema errors, unknown siblings, bad regexes, unmatched fingerprints, and samples
    that do not rank their own entry first or that another entry claims."""
    from kb.lint import static_problems
    from kb.load import KBLoadError, load_kb

    settings = Settings()
    load_problems: list[str] = []
    try:
        kb = load_kb(settings.kb_dir)
    except KBLoadError as exc:
        if not lenient:
            for problem in exc.problems:
                typer.echo(problem)
            fail(f"{len(exc.problems)} problems", 1)
        load_problems = exc.problems
        kb = load_kb(settings.kb_dir, lenient=True)
    problems = [str(p) for p in static_problems(kb)]
    from index.scanner import hyperscan_rejects

    for entry in kb.entries:
        for pattern in [f.pattern for f in entry.fingerprints] + list(entry.requires) + list(entry.excludes):
            if (why := hyperscan_rejects(pattern)) is not None:
                problems.append(f"{entry.id}: Hyperscan cannot compile {pattern!r}: {why}")
    if lenient:
        problems = [p for p in problems if "unknown sibling" not in p]
    if not static_only and (lenient or not problems):
        from bot.kb_checks import ranking_problems

        problems.extend(str(p) for p in ranking_problems(_engine(settings, kb), category=category))
    problems = load_problems + problems
    for problem in problems:
        typer.echo(problem)
    if problems:
        fail(f"{len(problems)} problems in {len(kb.entries)} entries", 1)
    out.print(f"ok: {len(kb.entries)} entries, {sum(len(e.samples) for e in kb.entries)} samples")


@kb_app.command("list")
def kb_list(category: Annotated[str | None, typer.Option(help="Only this category.")] = None) -> None:
    """List entries: id, category, title."""
    from kb.schema import CATEGORIES

    if category and category not in CATEGORIES:
        fail(f"unknown category {category!r}; one of: {', '.join(CATEGORIES)}")
    for entry in _kb_or_fail().entries:
        if category is None or entry.category == category:
            typer.echo(f"{entry.id:55} {entry.category:22} {entry.title}")


@kb_app.command("show")
def kb_show(entry_id: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show one entry in full."""
    kb = _kb_or_fail()
    entry = kb.by_id().get(entry_id)
    if entry is None:
        close = difflib.get_close_matches(entry_id, kb.ids(), n=3, cutoff=0.4)
        fail(f"no entry {entry_id!r}" + (f"; closest: {', '.join(close)}" if close else ""))
    if as_json:
        sys.stdout.write(entry.model_dump_json(indent=1) + "\n")
        return
    from bot.render.terminal import render_entry

    out.print(render_entry(entry))


@kb_app.command("stats")
def kb_stats() -> None:
    """Counts by category, fingerprints, samples and questions."""
    kb = _kb_or_fail()
    by_category = Counter(e.category for e in kb.entries)
    for category, count in sorted(by_category.items()):
        out.print(f"{category:22} {count:4}")
    out.print(
        f"{'total':22} {len(kb.entries):4} entries · {sum(len(e.fingerprints) for e in kb.entries)} fingerprints · "
        f"{sum(len(e.samples) for e in kb.entries)} samples · {sum(len(e.questions) for e in kb.entries)} questions"
    )


@app.command()
def serve(
    socket: Annotated[bool, typer.Option("--socket", help="Socket Mode (needs SLACK_BOT_TOKEN, SLACK_APP_TOKEN).")] = False,
    http: Annotated[bool, typer.Option("--http", help="HTTP mode (needs SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET).")] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 3000,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or error.")] = "info",
    log_json: Annotated[bool, typer.Option("--log-json", help="Log one JSON object per line.")] = False,
) -> None:
    """Run the Slack app."""
    if socket and http:
        fail("choose one of --socket and --http")
    from bot.slack.serve import ConfigError, load_settings
    from bot.slack.serve import serve as run

    try:
        run(load_settings(), mode="http" if http else "socket", host=host, port=port, log_level=log_level, log_json=log_json)
    except ConfigError as exc:
        fail(str(exc), 1)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
