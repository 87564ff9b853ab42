"""`traindoc kb ...` and `traindoc index build`: inspect, check and draft knowledge-base entries."""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import common
from bot.cli.common import fail, index_app, kb_app, out
from bot.ingest import report_from_bytes
from bot.settings import Settings


@index_app.command("build")
def index_build(
    force: Annotated[bool, typer.Option("--force", help="Rebuild even if current.")] = False,
) -> None:
    """Build (or rebuild) the dense index into the cache directory."""
    from index import store

    engine = common.engine()
    reason = store.staleness(engine.index_dir, engine.kb, engine.embedder)
    if reason is None and not force:
        out.print(f"index is current: {engine.index_dir}")
        return
    manifest = engine.rebuild_index()
    out.print(
        f"built {engine.index_dir}: {len(manifest.entry_ids)} "
        f"entries, {len(manifest.vector_entries)} vectors, "
        f"{manifest.dimension} dims, {manifest.built_seconds:.1f} s"
    )


@kb_app.command("lint")
def kb_lint(
    category: Annotated[
        str | None, typer.Option(help="Check the ranking of this category's samples only.")
    ] = None,
    static_only: Annotated[
        bool, typer.Option("--static", help="Skip the retrieval checks.")
    ] = False,
    lenient: Annotated[
        bool,
        typer.Option(
            "--lenient",
            help="Leave out files that do not load (still reported) and check the rest.",
        ),
    ] = False,
    hygiene: Annotated[
        bool,
        typer.Option(
            "--hygiene",
            help=(
                "Only the fingerprint hygiene rules: strong fingerprints on healthy logs "
                "or on other entries' samples."
            ),
        ),
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
        for pattern in (
            [f.pattern for f in entry.fingerprints] + list(entry.requires) + list(entry.excludes)
        ):
            if (why := hyperscan_rejects(pattern)) is not None:
                problems.append(f"{entry.id}: Hyperscan cannot compile {pattern!r}: {why}")
    if lenient:
        problems = [p for p in problems if "unknown sibling" not in p]
    if not static_only and (lenient or not problems):
        from bot.kb_checks import ranking_problems

        problems.extend(
            str(p) for p in ranking_problems(common.engine(settings, kb), category=category)
        )
    problems = load_problems + problems + hygiene_problems(kb, healthy_dir_for(settings.kb_dir))
    for problem in problems:
        typer.echo(problem)
    if problems:
        fail(f"{len(problems)} problems in {len(kb.entries)} entries", 1)
    out.print(f"ok: {len(kb.entries)} entries, {sum(len(e.samples) for e in kb.entries)} samples")


@kb_app.command("new")
def kb_new(
    from_log: Annotated[Path, typer.Option("--from", help="A log of the failure (plain or .gz).")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "Team entries directory (default: the first of TRAINDOC_KB_EXTRA, "
                "else ./team-kb)."
            ),
        ),
    ] = None,
    entry_id: Annotated[
        str | None, typer.Option("--id", help="The new entry's id (kebab-case).")
    ] = None,
    category: Annotated[
        str | None, typer.Option(help="Its category (default: the nearest entry's).")
    ] = None,
) -> None:
    """Draft a team entry from a log: fingerprint candidates and siblings filled, prose left
    TODO."""
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
    entry = draft_entry(
        report, common.engine(settings).diagnose(report), entry_id=entry_id, category=category
    )
    root = out_dir or (settings.kb_extra[0] if settings.kb_extra else Path("team-kb"))
    path = root / entry["category"] / f"{entry['id']}.yaml"
    if path.exists():
        fail(f"{path} exists; choose another --id")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_yaml(entry), encoding="utf-8")
    out.print(
        f"wrote {path}: {len(entry['fingerprints'])} fingerprint candidates, "
        f"siblings {', '.join(entry['siblings']) or '-'}.\n"
        f"Fill every TODO, then: TRAINDOC_KB_EXTRA={root} traindoc kb lint",
        markup=False,
    )


@kb_app.command("list")
def kb_list(
    category: Annotated[str | None, typer.Option(help="Only this category.")] = None,
) -> None:
    """List entries: id, category, title."""
    from kb.schema import CATEGORIES

    if category and category not in CATEGORIES:
        fail(f"unknown category {category!r}; one of: {', '.join(CATEGORIES)}")
    for entry in common.kb().entries:
        if category is None or entry.category == category:
            typer.echo(f"{entry.id:55} {entry.category:22} {entry.title}")


@kb_app.command("show")
def kb_show(entry_id: str, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Show one entry in full."""
    kb = common.kb()
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
    kb = common.kb()
    by_category = Counter(e.category for e in kb.entries)
    for category, count in sorted(by_category.items()):
        out.print(f"{category:22} {count:4}")
    out.print(
        f"{'total':22} {len(kb.entries):4} entries "
        f"· {sum(len(e.fingerprints) for e in kb.entries)} fingerprints · "
        f"{sum(len(e.samples) for e in kb.entries)} samples "
        f"· {sum(len(e.questions) for e in kb.entries)} questions"
    )
