"""The compact rank table of a triage: the initiating rank first, then ranks grouped by what they
reported ("63 ranks: watchdog timeout on ALLREDUCE SeqNum 8812"), then the ranks that logged
nothing."""

from __future__ import annotations

import re

from rich.table import Table
from rich.text import Text

from bot.kinds import LABEL
from bot.model import CollateralGroup, Triage
from bot.render.text import location

_XID = re.compile(r"Xid \(PCI:[^)]*\): (\d+)")
_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception)): ")


def initiator_label(kind: str, text: str) -> str:
    """'Xid 79', 'ValueError', or the kind's plain label."""
    if kind == "xid" and (m := _XID.search(text)):
        return f"GPU Xid {m.group(1)}"
    if kind == "exception" and (m := _EXCEPTION.search(text)):
        return m.group(1)
    if kind == "desync":
        return "waited in a different collective"
    return LABEL.get(kind, kind)


def rank_ranges(ranks: tuple[int, ...] | list[int]) -> str:
    """(0, 1, 2, 5, 7, 8) -> '0-2,5,7-8'."""
    out: list[str] = []
    values = sorted(set(ranks))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)


def group_label(group: CollateralGroup) -> str:
    label = LABEL.get(group.kind, group.kind)
    if group.kind == "watchdog-timeout" and group.detail:
        return f"{label} on {group.detail}"
    return label


def _count(n: int) -> str:
    return f"{n} rank" if n == 1 else f"{n} ranks"


def rank_table(triage: Triage) -> Table:
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False, expand=False)
    table.add_column("ranks", no_wrap=True)
    table.add_column("what they reported", overflow="fold")
    table.add_column("rank ids", style="dim", overflow="fold")
    init = triage.initiating
    if init is not None:
        who = f"rank {init.rank}" if init.rank is not None else "unattributed"
        where = f" on {init.node}" if init.node else ""
        when = f", {init.timestamp}" if init.timestamp else ""
        what = Text(
            f"{initiator_label(init.kind, init.text)} ({location(init.file, init.line)}{when})",
            style="bold red",
        )
        if init.reason:
            what.append(f" · {init.reason}", style="dim")
        table.add_row(Text(f"{who}{where}", style="bold red"), what, "initiator")
    elif triage.no_single_initiator:
        table.add_row(
            Text("no single initiator", style="bold yellow"),
            Text(triage.summary, style="yellow"),
            "",
        )
    for group in triage.failing_groups:
        table.add_row(
            _count(len(group.ranks)),
            Text(f"own error: {group_label(group)}", style="red"),
            rank_ranges(group.ranks),
        )
    for group in triage.collateral_groups:
        table.add_row(_count(len(group.ranks)), group_label(group), rank_ranges(group.ranks))
    if triage.silent_ranks:
        table.add_row(
            _count(len(triage.silent_ranks)),
            Text("logged nothing", style="dim"),
            rank_ranges(triage.silent_ranks),
        )
    return table
