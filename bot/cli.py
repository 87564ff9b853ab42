"""The `traindoc` command: ask, diagnose, eval, kb lint/list/show/stats, index build, calibrate, serve."""

from __future__ import annotations

import difflib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from typer.core import TyperGroup

from bot.ingest import report_from_bytes
from bot.settings import Settings
from kb.errors import EXIT_INPUT, IngestError, SetupError, TraindocError

if TYPE_CHECKING:
    from bot.diagnose import Engine
    from kb.load import KnowledgeBase



class RootCommand(TyperGroup):
    """The root command: the one place a TraindocError becomes a `traindoc: ...` line and its exit code."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TraindocError as exc:
            fail(exc.explain(), exc.exit_code)


CONTEXT = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    cls=RootCommand,
    add_completion=False,
    no_args_is_help=True,
    context_settings=CONTEXT,
    help="Diagnose ML training and inference failures.",
)
db_app = typer.Typer(no_args_is_help=True, context_settings=CONTEXT, help="The history database (SQLite or PostgreSQL).")
feedback_app = typer.Typer(no_args_is_help=True, context_settings=CONTEXT, help="Turn users' feedback into eval cases.")
kb_app = typer.Typer(no_args_is_help=True, context_settings=CONTEXT, help="Inspect and check the knowledge base.")
index_app = typer.Typer(no_args_is_help=True, context_settings=CONTEXT, help="Build the retrieval index.")
app.add_typer(kb_app, name="kb")
app.add_typer(index_app, name="index")
app.add_typer(db_app, name="db")
app.add_typer(feedback_app, name="feedback")

out = Console()
err = Console(stderr=True)

def fail(message: str, code: int = EXIT_INPUT) -> None:
    err.print(f"traindoc: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _engine(settings: Settings | None = None, kb: KnowledgeBase | None = None) -> Engine:
    from bot.diagnose import Engine

    progress = task = None

    def on_progress(done: int, total: int) -> None:
        nonlocal progress, task
        if task is None:  # rich.progress only when an index is built: a query does not pay its import
            from rich.progress import Progress

            progress = Progress(transient=True, console=err)
            progress.start()
            task = progress.add_task("building the index", total=total)
        progress.update(task, completed=done)
        if done >= total:
            progress.stop()

    return Engine.from_settings(settings or Settings(), kb=kb, progress=on_progress)


def _kb() -> KnowledgeBase:
    return Settings().load_kb()


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


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"traindoc {version('traindoc')}")
        except PackageNotFoundError:
            typer.echo("traindoc (not installed as a package)")
        raise typer.Exit()


@app.callback()
def _main(
    _: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Diagnose ML training and inference failures."""


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question in plain words, or a pasted error line.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (the stable contract in docs/json.md).")] = False,
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
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (the stable contract in docs/json.md).")] = False,
) -> None:
    """Diagnose one or more log files (one per rank or node is fine)."""
    from bot.bounded import iter_file, iter_path
    from bot.ingest import build_report, normalize, read_text
    from bot.model import LogFile
    from bot.render.progress import busy, input_progress

    sizes: list[int] = []
    for name in files:
        if name == "-":
            sizes.append(0)
            continue
        path = Path(name)
        if not path.is_file():
            fail(f"{name}: no such file")
        sizes.append(path.stat().st_size)
    logs: list[LogFile] = []
    empty: list[tuple[str, bytes]] = []
    # One file at a time, streamed within the byte budget (head and tail kept, gzip inflated as a
    # stream); a file that cannot be read (binary among many rank logs, say) is named.
    with input_progress(err, sum(sizes)) as progress:
        for name, size in zip(files, sizes, strict=True):
            shown = "<stdin>" if name == "-" else name  # as typed: a directory may name the node
            chunks = iter_file(sys.stdin.buffer) if name == "-" else iter_path(Path(name))
            try:
                text = normalize(read_text(chunks, name=shown))
            except IngestError as exc:  # name the file among many
                raise IngestError(f"{name}: {exc}") from None
            except OSError as exc:
                fail(f"{name}: {exc.strerror}")
            if not text.strip():
                empty.append((shown, b""))
                continue
            logs.append(LogFile(name=shown, text=text))
            progress.advance(size)
    report = build_report(logs) if logs else report_from_bytes(empty)
    engine = _engine()
    with busy(err, sum(sizes), "diagnosing"):
        diagnosis = engine.diagnose(report)
    _emit(diagnosis, as_json, with_table=True)


@app.command("eval")
def eval_command(
    directory: Annotated[Path, typer.Argument(help="A directory of eval case YAML files (label: none marks a negative).")],
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the figures to this file.")] = None,
    show_misses: Annotated[bool, typer.Option("--misses", help="List the cases the hybrid gets wrong.")] = False,
) -> None:
    """Score every retriever alone and the hybrid on labelled cases, through the same path as
    `diagnose`: ranking figures on positives, false answers on negatives, a precision/coverage table."""
    from rich.progress import track

    from bot.evaluate import evaluate, load_cases, negative_breakdown, threshold_table

    if not directory.is_dir():
        fail(f"{directory}: not a directory")
    cases = load_cases(directory)
    if not cases:
        fail(f"{directory}: no *.yaml cases")
    engine = _engine()
    progress = iter(track(range(len(cases)), description="evaluating", console=err, transient=True))
    results, outcomes = evaluate(engine, cases, progress=lambda: next(progress, None))
    next(progress, None)
    negatives = sum(c.is_negative for c in cases)
    typer.echo(
        f"traindoc eval: {len(cases)} cases ({sum(c.kind == 'log' for c in cases)} logs; "
        f"{len(cases) - negatives} positives, {negatives} negatives)"
    )
    columns = ("top1", "top3", "mrr", "answered", "precision_answered", "false_answer_rate", "p50_ms", "p95_ms")
    wide = ("precision_answered", "false_answer_rate")
    typer.echo(f"{'retriever':12}" + "".join(f"{c:>20}" if c in wide else f"{c:>10}" for c in columns))
    for name, figures in results.items():
        cells = "".join(
            f"{figures[c]:>20.3f}" if c in wide else f"{figures[c]:>10.1f}" if c.endswith("_ms") else f"{figures[c]:>10.3f}"
            for c in columns
        )
        typer.echo(f"{name:12}{cells}")
    typer.echo("(top1..precision_answered on positives; false_answer_rate: negatives answered with a failure entry)")
    table = threshold_table(cases, outcomes["hybrid"])
    breakdown = negative_breakdown(cases, outcomes["hybrid"])
    typer.echo(f"\nhybrid at other thresholds (now {engine.threshold():.2f}):")
    typer.echo(f"{'threshold':>10}{'coverage':>10}{'precision':>11}{'false_answers':>15}")
    for row in table:
        typer.echo(f"{row['threshold']:>10.2f}{row['coverage']:>10.3f}{row['precision']:>11.3f}{row['false_answer_rate']:>15.3f}")
    if breakdown:
        typer.echo("\nhybrid verdicts on negatives: " + "; ".join(
            f"{kind} {counts['cases']}: " + ", ".join(f"{v} {n}" for v, n in counts.items() if v != "cases")
            for kind, counts in breakdown.items()
        ))
    if show_misses:
        for case, outcome in zip(cases, outcomes["hybrid"]):
            got = outcome.ranked_ids[0] if outcome.ranked_ids else "-"
            if case.is_negative and outcome.answered:
                out.print(f"false answer {case.name} ({case.negative or 'negative'}): got {got} ({outcome.confidence:.2f})", markup=False)
            elif not case.is_negative and (not outcome.ranked_ids or outcome.ranked_ids[0] not in case.accepted):
                out.print(f"miss {case.name}: want {case.label}, got {got} ({outcome.verdict})", markup=False)
    if json_out:
        payload = {"cases": len(cases), **results, "thresholds": table, "negatives": breakdown}
        json_out.write_text(json.dumps(payload, indent=1) + "\n")


@app.command()
def calibrate(
    directories: Annotated[
        list[Path] | None,
        typer.Argument(help="Extra eval case directories to fit on (development only; the bundled fit uses none)."),
    ] = None,
    write: Annotated[bool, typer.Option("--write/--dry-run", help="Write the fitted model (see --out).")] = True,
    out_file: Annotated[
        Path | None,
        typer.Option("--out", help="Where to write it (default: calibration.json in the cache dir; use it with TRAINDOC_CALIBRATION)."),
    ] = None,
    negatives: Annotated[Path | None, typer.Option(help="Directory of label: none cases (default: the bundled index/negatives).")] = None,
) -> None:
    """Refit the confidence model and threshold on what `diagnose` produces: every KB sample and
    question (own dense vector left out), the negatives (benign entries, index/negatives,
    index/offtopic.yaml), plus any eval directories. Prints in-sample and 5-fold held-out figures."""
    from rich.progress import Progress

    from bot.calibration_data import NEGATIVES_DIR, fit_calibration, texts
    from bot.diagnose import RETRIEVERS

    engine = _engine()
    negatives_dir = negatives or NEGATIVES_DIR
    total = len(texts(engine, directories or [], negatives_dir)) * len(RETRIEVERS)
    with Progress(transient=True, console=err) as progress:
        task = progress.add_task("diagnosing the calibration texts", total=total)
        calibrations, report = fit_calibration(
            engine, directories or [], negatives_dir=negatives_dir, progress=lambda: progress.advance(task)
        )
    typer.echo(report)
    if write:
        from bot.settings import default_cache_dir
        from index.calibration import save_all

        target = out_file or default_cache_dir() / "calibration.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        save_all(calibrations, target)
        hint = "" if out_file else f"; use it with TRAINDOC_CALIBRATION={target}"
        out.print(f"wrote {target}{hint}", markup=False, soft_wrap=True)


@index_app.command("build")
def index_build(force: Annotated[bool, typer.Option("--force", help="Rebuild even if current.")] = False) -> None:
    """Build (or rebuild) the dense index into the cache directory."""
    from index import store

    engine = _engine()
    reason = store.staleness(engine.index_dir, engine.kb, engine.embedder)
    if reason is None and not force:
        out.print(f"index is current: {engine.index_dir}")
        return
    manifest = engine.rebuild_index()
    out.print(
        f"built {engine.index_dir}: {len(manifest.entry_ids)} entries, {len(manifest.vector_entries)} vectors, "
        f"{manifest.dimension} dims, {manifest.built_seconds:.1f} s"
    )


@kb_app.command("lint")
def kb_lint(
    category: Annotated[str | None, typer.Option(help="Check the ranking of this category's samples only.")] = None,
    static_only: Annotated[bool, typer.Option("--static", help="Skip the retrieval checks.")] = False,
    lenient: Annotated[bool, typer.Option("--lenient", help="Leave out files that do not load (still reported) and check the rest.")] = False,
    hygiene: Annotated[
        bool, typer.Option("--hygiene", help="Only the fingerprint hygiene rules: strong fingerprints on healthy logs or on other entries' samples.")
    ] = False,
) -> None:
    """Fail on schema errors, unknown siblings, bad regexes, unmatched fingerprints, strong
    fingerprints that match a healthy log (kb/healthy) or another entry's sample, and samples that
    do not rank their own entry first or that another entry claims."""
    from kb.lint import healthy_dir_for, hygiene_problems, static_problems
    from kb.load import KBLoadError

    settings = Settings()
    load_problems: list[str] = []
    try:
        kb = settings.load_kb()
    except KBLoadError as exc:
        if not lenient:
            for problem in exc.problems:
                typer.echo(problem)
            fail(f"{len(exc.problems)} problems", 1)
        load_problems = exc.problems
        kb = settings.load_kb(lenient=True)
    if hygiene:
        found = hygiene_problems(kb, healthy_dir_for(settings.kb_dir))
        for problem in found:
            typer.echo(problem)
        if found:
            fail(f"{len(found)} fingerprint hygiene problems in {len(kb.entries)} entries", 1)
        out.print(f"ok: no fingerprint hygiene problems in {len(kb.entries)} entries")
        return
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
    problems = load_problems + problems + hygiene_problems(kb, healthy_dir_for(settings.kb_dir))
    for problem in problems:
        typer.echo(problem)
    if problems:
        fail(f"{len(problems)} problems in {len(kb.entries)} entries", 1)
    out.print(f"ok: {len(kb.entries)} entries, {sum(len(e.samples) for e in kb.entries)} samples")


@kb_app.command("new")
def kb_new(
    from_log: Annotated[Path, typer.Option("--from", help="A log of the failure (plain or .gz).")],
    out_dir: Annotated[Path | None, typer.Option("--out", help="Team entries directory (default: the first of TRAINDOC_KB_EXTRA, else ./team-kb).")] = None,
    entry_id: Annotated[str | None, typer.Option("--id", help="The new entry's id (kebab-case).")] = None,
    category: Annotated[str | None, typer.Option(help="Its category (default: the nearest entry's).")] = None,
) -> None:
    """Draft a team entry from a log: fingerprint candidates and siblings filled, prose left TODO."""
    import re

    from bot.scaffold import draft_entry, to_yaml
    from kb.schema import CATEGORIES, ID_PATTERN

    if category and category not in CATEGORIES:
        fail(f"unknown category {category!r}; one of: {', '.join(CATEGORIES)}")
    if entry_id and not re.match(ID_PATTERN, entry_id):
        fail(f"{entry_id!r} is not a kebab-case id")
    if not from_log.is_file():
        fail(f"{from_log}: no such file")
    report = report_from_bytes([(from_log.name, from_log.read_bytes())])
    settings = Settings()
    entry = draft_entry(report, _engine(settings).diagnose(report), entry_id=entry_id, category=category)
    root = out_dir or (settings.kb_extra[0] if settings.kb_extra else Path("team-kb"))
    path = root / entry["category"] / f"{entry['id']}.yaml"
    if path.exists():
        fail(f"{path} exists; choose another --id")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(entry), encoding="utf-8")
    out.print(
        f"wrote {path}: {len(entry['fingerprints'])} fingerprint candidates, siblings {', '.join(entry['siblings']) or '-'}.\n"
        f"Fill every TODO, then: TRAINDOC_KB_EXTRA={root} traindoc kb lint",
        markup=False,
    )


@kb_app.command("list")
def kb_list(category: Annotated[str | None, typer.Option(help="Only this category.")] = None) -> None:
    """List entries: id, category, title."""
    from kb.schema import CATEGORIES

    if category and category not in CATEGORIES:
        fail(f"unknown category {category!r}; one of: {', '.join(CATEGORIES)}")
    for entry in _kb().entries:
        if category is None or entry.category == category:
            typer.echo(f"{entry.id:55} {entry.category:22} {entry.title}")


@kb_app.command("show")
def kb_show(entry_id: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show one entry in full."""
    kb = _kb()
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
    kb = _kb()
    by_category = Counter(e.category for e in kb.entries)
    for category, count in sorted(by_category.items()):
        out.print(f"{category:22} {count:4}")
    out.print(
        f"{'total':22} {len(kb.entries):4} entries · {sum(len(e.fingerprints) for e in kb.entries)} fingerprints · "
        f"{sum(len(e.samples) for e in kb.entries)} samples · {sum(len(e.questions) for e in kb.entries)} questions"
    )


_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _since(value: str) -> float:
    """'30d', '12h', '90m', '2w' before now, as epoch seconds."""
    import re
    import time

    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", value)
    if not match:
        fail(f"--since {value!r}: say how long ago, e.g. 7d, 12h, 90m or 2w")
    return time.time() - int(match.group(1)) * _UNITS[match.group(2)]


def _store(settings: Settings):
    from bot.store import store_from_settings

    try:
        return store_from_settings(settings)
    except Exception as exc:  # noqa: BLE001 - any database error is a setup problem, said in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise SetupError(f"cannot open the history database: {type(exc).__name__}: {first}") from None


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Create or migrate the history database to the current schema (the app also does this at start-up)."""
    from bot.store import migrations

    store = _store(Settings())
    engine = getattr(getattr(store, "history", store), "engine", None)
    if engine is None:
        fail("the configured store is not a SQL database", 1)
    out.print(f"database at revision {migrations.current(engine)} (head {migrations.head()})", markup=False, soft_wrap=True)
    store.close()


@feedback_app.command("export")
def feedback_export(
    directory: Annotated[Path, typer.Argument(help="Where to write one eval case YAML per diagnosis.")],
    helpful: Annotated[bool, typer.Option("--helpful", help="Also export answers users confirmed as helpful.")] = False,
    since: Annotated[str, typer.Option(help="Only feedback this recent (e.g. 30d).")] = "3650d",
) -> None:
    """Write every corrected answer as an eval case (redacted text, the corrected entry as label)."""
    import yaml

    from bot.feedback import cases_from_feedback

    settings = Settings()
    kb = _kb()
    store = _store(settings)
    start = _since(since)
    cases, missing = cases_from_feedback(store.diagnoses_since(0), store.feedback_since(start), set(kb.ids()), helpful=helpful)
    store.close()
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for exported in cases:
        path = directory / f"feedback-{exported.diagnosis_id}.yaml"
        body = yaml.safe_dump(exported.case, sort_keys=False, allow_unicode=True, width=110)
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            path.write_text(body, encoding="utf-8")
            written += 1
    out.print(
        f"{len(cases)} cases in {directory} ({written} new or changed)"
        + (f"; {missing} with feedback but no stored input" if missing else ""),
        markup=False,
        soft_wrap=True,
    )


@app.command()
def stats(
    since: Annotated[str, typer.Option(help="Only answers this recent (e.g. 30d, 12h).")] = "30d",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Which failures keep coming back, whether the answers helped, and what needs work."""
    from bot.feedback import usage_stats

    kb = _kb()
    store = _store(Settings())
    start = _since(since)
    figures = usage_stats(store.diagnoses_since(start), store.feedback_since(start), {e.id: e.category for e in kb.entries})
    store.close()
    if as_json:
        sys.stdout.write(json.dumps(figures) + "\n")
        return
    from rich.table import Table

    out.print(f"{figures['diagnoses']} answers since {since} ago · abstained {figures['abstention_rate']:.0%} · {figures['verdicts']}", markup=False, soft_wrap=True)
    table = Table("entry", "answers", "👍", "👎", "helpful rate", title="Answers per entry")
    for entry_id, row in list(figures["entries"].items())[:25]:
        rate = row["helpful_rate"]
        table.add_row(entry_id, str(row["answers"]), str(row["helpful"]), str(row["wrong"]), "-" if rate is None else f"{rate:.0%}")
    out.print(table)
    categories = Table("category", "answers", title="Answers per category")
    for category, count in figures["categories"].items():
        categories.add_row(category, str(count))
    out.print(categories)
    if figures["most_corrected"]:
        worst = Table("entry", "👎", "corrected to", title="Most often corrected (the knowledge that needs work)")
        for row in figures["most_corrected"]:
            worst.add_row(row["entry"], str(row["wrong"]), ", ".join(f"{k} ×{v}" for k, v in row["corrected_to"].items()))
        out.print(worst)


@app.command()
def rematch(
    since: Annotated[str, typer.Option(help="Re-run answers this recent (e.g. 7d).")] = "7d",
    post: Annotated[bool, typer.Option("--post", help="Reply once in each Slack thread whose answer changed.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the changes as JSON.")] = False,
) -> None:
    """Re-diagnose stored (redacted) inputs against the current knowledge base; list what changed."""
    from bot.rematch import FOREVER_S, changed_answers, rematch_text

    settings = Settings()
    if post and settings.slack_bot_token is None:
        fail("--post needs SLACK_BOT_TOKEN", 1)
    store = _store(settings)
    engine = _engine(settings)
    changes = changed_answers(store.diagnoses_since(_since(since)), engine.diagnose)
    titles = {e.id: e.title for e in engine.entries()}
    posted = 0
    if post:
        from slack_sdk import WebClient
        from slack_sdk.errors import SlackApiError

        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
        client = WebClient(token=token, base_url=settings.slack_api_url or WebClient.BASE_URL)
        for change in changes:
            if change.postable and store.claim(change.claim_key, FOREVER_S):
                try:
                    client.chat_postMessage(channel=change.record.channel, thread_ts=change.record.message_ts, text=rematch_text(change, titles))
                    posted += 1
                except SlackApiError as exc:
                    err.print(f"traindoc: could not post to {change.record.channel}: {exc.response.get('error')}", markup=False, soft_wrap=True)
    store.close()
    if as_json:
        rows = [{"diagnosis": c.record.id, "channel": c.record.channel, "was": c.was, "now": c.now, "confidence": round(c.now_confidence, 4)} for c in changes]
        sys.stdout.write(json.dumps({"changed": rows, "posted": posted}) + "\n")
        return
    for change in changes:
        out.print(f"{change.record.id}  {change.record.channel or '-':12} {change.was} -> {change.now} ({change.now_confidence:.2f})", markup=False, soft_wrap=True)
    out.print(f"{len(changes)} answers changed" + (f"; posted {posted} thread replies" if post else ""), markup=False, soft_wrap=True)


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
    from bot.slack.serve import load_settings
    from bot.slack.serve import serve as run

    run(load_settings(), mode="http" if http else "socket", host=host, port=port, log_level=log_level, log_json=log_json)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
