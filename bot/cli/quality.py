"""`traindoc eval` and `traindoc calibrate`: score and refit the engine on labelled texts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import common
from bot.cli.common import app, err, fail, out


@app.command("eval")
def eval_command(
    directory: Annotated[
        Path,
        typer.Argument(help="A directory of eval case YAML files (label: none marks a negative)."),
    ],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the figures to this file.")
    ] = None,
    show_misses: Annotated[
        bool, typer.Option("--misses", help="List the cases the hybrid gets wrong.")
    ] = False,
) -> None:
    """Score every retriever alone and the hybrid on labelled cases, through the same path as
    `diagnose`: ranking figures on positives, false answers on negatives, a precision/coverage
    table."""
    from rich.progress import track

    from bot.evaluate import evaluate, load_cases, negative_breakdown, threshold_table

    if not directory.is_dir():
        fail(f"{directory}: not a directory")
    cases = load_cases(directory)
    if not cases:
        fail(f"{directory}: no *.yaml cases")
    engine = common.engine()
    progress = iter(track(range(len(cases)), description="evaluating", console=err, transient=True))
    results, outcomes = evaluate(engine, cases, progress=lambda: next(progress, None))
    next(progress, None)
    negatives = sum(c.is_negative for c in cases)
    typer.echo(
        f"traindoc eval: {len(cases)} cases ({sum(c.kind == 'log' for c in cases)} logs; "
        f"{len(cases) - negatives} positives, {negatives} negatives)"
    )
    columns = (
        "top1",
        "top3",
        "mrr",
        "answered",
        "precision_answered",
        "false_answer_rate",
        "p50_ms",
        "p95_ms",
    )
    wide = ("precision_answered", "false_answer_rate")
    typer.echo(
        f"{'retriever':12}" + "".join(f"{c:>20}" if c in wide else f"{c:>10}" for c in columns)
    )
    for name, figures in results.items():
        cells = "".join(
            f"{figures[c]:>20.3f}"
            if c in wide
            else f"{figures[c]:>10.1f}"
            if c.endswith("_ms")
            else f"{figures[c]:>10.3f}"
            for c in columns
        )
        typer.echo(f"{name:12}{cells}")
    typer.echo(
        "(top1..precision_answered on positives; false_answer_rate: negatives answered with a "
        "failure entry)"
    )
    table = threshold_table(cases, outcomes["hybrid"])
    breakdown = negative_breakdown(cases, outcomes["hybrid"])
    typer.echo(f"\nhybrid at other thresholds (now {engine.threshold():.2f}):")
    typer.echo(f"{'threshold':>10}{'coverage':>10}{'precision':>11}{'false_answers':>15}")
    for row in table:
        typer.echo(
            f"{row['threshold']:>10.2f}{row['coverage']:>10.3f}{row['precision']:>11.3f}{row['false_answer_rate']:>15.3f}"
        )
    if breakdown:
        typer.echo(
            "\nhybrid verdicts on negatives: "
            + "; ".join(
                f"{kind} {counts['cases']}: "
                + ", ".join(f"{v} {n}" for v, n in counts.items() if v != "cases")
                for kind, counts in breakdown.items()
            )
        )
    if show_misses:
        for case, outcome in zip(cases, outcomes["hybrid"], strict=False):
            got = outcome.ranked_ids[0] if outcome.ranked_ids else "-"
            if case.is_negative and outcome.answered:
                out.print(
                    f"false answer {case.name} ({case.negative or 'negative'}): got {got} "
                    f"({outcome.confidence:.2f})",
                    markup=False,
                )
            elif not case.is_negative and (
                not outcome.ranked_ids or outcome.ranked_ids[0] not in case.accepted
            ):
                out.print(
                    f"miss {case.name}: want {case.label}, got {got} ({outcome.verdict})",
                    markup=False,
                )
    if json_out:
        payload = {"cases": len(cases), **results, "thresholds": table, "negatives": breakdown}
        json_out.write_text(json.dumps(payload, indent=1) + "\n")


@app.command()
def calibrate(
    directories: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Extra eval case directories to fit on "
            "(development only; the bundled fit uses none)."
        ),
    ] = None,
    write: Annotated[
        bool, typer.Option("--write/--dry-run", help="Write the fitted model (see --out).")
    ] = True,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help=(
                "Where to write it (default: calibration.json in the cache dir; "
                "use it with TRAINDOC_CALIBRATION)."
            ),
        ),
    ] = None,
    negatives: Annotated[
        Path | None,
        typer.Option(help="Directory of label: none cases (default: the bundled index/negatives)."),
    ] = None,
) -> None:
    """Refit the confidence model and threshold on what `diagnose` produces: every KB sample and
    question (own dense vector left out), the negatives (benign entries, index/negatives,
    index/offtopic.yaml), plus any eval directories. Prints in-sample and 5-fold held-out
    figures."""
    from rich.progress import Progress

    from bot.calibration_data import NEGATIVES_DIR, fit_calibration, texts
    from bot.diagnose import RETRIEVERS

    engine = common.engine()
    negatives_dir = negatives or NEGATIVES_DIR
    total = len(texts(engine, directories or [], negatives_dir)) * len(RETRIEVERS)
    with Progress(transient=True, console=err) as progress:
        task = progress.add_task("diagnosing the calibration texts", total=total)
        calibrations, report = fit_calibration(
            engine,
            directories or [],
            negatives_dir=negatives_dir,
            progress=lambda: progress.advance(task),
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
