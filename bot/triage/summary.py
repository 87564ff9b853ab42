"""The words of a triage: the one-line summary and the phrases the rank table reuses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from bot.kinds import COLLATERAL_PHRASE, INFERRED, ROOT_PHRASE
from bot.model import CollateralGroup, Initiating
from bot.triage.fields import EXCEPTION_NAME, XID, XID_MEANING
from bot.triage.job import Suspect


def who_phrase(rank: int | None, node: str | None) -> str:
    if rank is None:
        return f"a GPU on {node}" if node else "an unattributed process"
    return f"rank {rank} on {node}" if node else f"rank {rank}"


def _root_phrase(c: Suspect) -> str:
    if c.kind == "xid" and (m := XID.search(c.event.text)):
        meaning = XID_MEANING.get(m.group(2))
        return f"failed first: Xid {m.group(2)}" + (f" ({meaning})" if meaning else "")
    if c.kind == "exception" and (m := EXCEPTION_NAME.search(c.event.text)):
        return f"raised {m.group(1).rsplit('.', 1)[-1]}"
    return ROOT_PHRASE.get(c.kind, f"failed ({c.kind})")


def collateral_phrase(group: CollateralGroup) -> str:
    """'63 ranks timed out waiting on ALLREDUCE SeqNum 8812' (used by the summary and the rank
    table)."""
    n = len(group.ranks)
    who = f"{n} rank" if n == 1 else f"{n} ranks"
    if group.kind == "watchdog-timeout":
        return f"{who} timed out waiting" + (f" on {group.detail}" if group.detail else "")
    phrase = COLLATERAL_PHRASE.get(group.kind, group.kind)
    if n == 1:
        phrase = phrase.replace("were ", "was ").replace(" their ", " its ")
    return f"{who} {phrase}"


def _op_of(c: Suspect, timeouts: dict[int, tuple[str, int]]) -> str:
    op = timeouts.get(c.rank) if c.rank is not None else None
    return f"{op[0]} SeqNum {op[1]}".strip() if op else "another collective"


def summary(
    initiator: Suspect | None,
    initiating: Initiating | None,
    groups: list[CollateralGroup],
    failing: list[Suspect],
    silent: Sequence[int],
    majority: tuple[str, int] | None,
    no_single: bool,
    job_timeout: dict[int, tuple[str, int]],
) -> str:
    tail = ", ".join(collateral_phrase(g) for g in groups[:3])
    if initiator is not None:
        if initiator.kind in INFERRED and majority:
            op = f"{majority[0]} SeqNum {majority[1]}".strip()
            phrase = {
                "stalled": f"never reached {op}",
                "checkpoint": f"was still saving a checkpoint and never reached {op}",
                "silent": f"logged nothing while the others waited in {op}",
                "desync": f"waited in a different collective ({_op_of(initiator, job_timeout)}) "
                "from the others",
            }[initiator.kind]
            reason = initiating.reason if initiating is not None else ""
            if initiator.kind == "desync" and "desync report" in (reason or ""):
                phrase = "was named by the NCCL desync report as the lagging rank"
        else:
            phrase = _root_phrase(initiator)
            phrase = phrase if phrase.startswith("failed first") else phrase + " first"
        when = ""
        if initiating and initiating.timestamp:
            stalled = initiator.kind in ("stalled", "checkpoint", "silent")
            when = (
                f" (last line {initiating.timestamp})" if stalled else f" at {initiating.timestamp}"
            )
        head = f"{who_phrase(initiator.rank, initiator.node)} {phrase}{when}"
        extra = f"; {len(failing)} other rank(s) also failed on their own" if failing else ""
        return f"{head}; {tail}{extra}" if tail else head + extra
    if failing:
        kinds = Counter(c.kind for c in failing)
        kind, _ = kinds.most_common(1)[0]
        first = failing[0]
        when = f" (first at {first.event.ts[1]})" if first.event.ts else ""
        what = ROOT_PHRASE.get(kind, kind)
        head = (
            f"No single initiator: {len(failing)} ranks failed at about the same time; "
            f"most {what}{when}"
        )
        return f"{head}; {tail}" if tail else head
    if groups:
        return f"No single initiator: {tail}, and no rank reported an error of its own"
    return "No single initiator: no rank reported a root-type error"
