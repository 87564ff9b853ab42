"""The line-prefix grammar: who printed a log line, when, and the message without the prefixes.

Launchers, collectors and loggers stack prefixes in front of a message, in any order:

    [pod/trainer-2/pytorch] 2026-12-02T12:01:00.512331234Z [rank2]:[E1202 12:01:00.512331 ...] msg
    worker-1: [default3]:node02:4242:4301 [3] NCCL WARN ...
    [1,3]<stderr>:(RayTrainWorker pid=812, ip=10.0.0.3) Traceback ...
    Dec  2 12:01:00 node03 kernel: [ 8812.112233] NVRM: Xid (PCI:0000:9d:00): 79, ...

`parse_line` peels them one at a time (kubectl --prefix and --timestamps, torchrun
--tee/--redirects, `[rankN]:`, srun --label, Open MPI --tag-output, pdsh, Ray, NCCL's
host:pid:tid [dev], syslog, journald, dmesg and dmesg -T, ISO, glog and vLLM stamps) and returns a
`Line`. index.sources reads the same facts from a file name (rank7.log, node03-dmesg.txt).

Every pattern is anchored at the current position and bounded, and each peel consumes at least one
character, so a line costs linear time however hostile; the message is always a suffix of the line.
Used by triage (bot/triage), evidence extraction (index/query_text.py) and the renderers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

MAX_PEELS = 10  # deeper stacks than this are not prefixes any more
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


class Stamp(NamedTuple):
    """A wall-clock time: `key` orders lines of one job (years and zones are ignored: glog prints
    neither), `clock` is what the answer shows."""

    key: float
    clock: str


@dataclass(slots=True)
class Line:
    """One log line, taken apart."""

    text: str  # the message: the line without the prefixes peeled off (a suffix of it)
    source: str | None = None
    node: str | None = None  # host or pod
    rank: int | None = None  # global rank
    local_rank: int | None = None  # rank within its node ([default3]:)
    timestamp: Stamp | None = None
    pid: int | None = None
    device: int | None = None  # NCCL's "[3]": the CUDA device of the printing process
    level: str | None = None  # glog / vLLM level letter or word, when a header carried one


def _stamp(month: int, day: int, hh: str, mm: str, ss: str, frac: str | None) -> Stamp | None:
    h, m, s = int(hh), int(mm), int(ss)
    if not (1 <= month <= 12 and 1 <= day <= 31 and h < 24 and m < 60 and s < 61):
        return None
    key = ((month * 32 + day) * 24 + h) * 3600 + m * 60 + s + (float("0." + frac) if frac else 0.0)
    return Stamp(key, f"{h:02d}:{m:02d}:{s:02d}")


# -- the prefixes, each anchored at the current position
# -------------------------------------------------

# kubectl logs --prefix
_POD = re.compile(r"\[pod/([a-z0-9][a-z0-9.-]{0,252})/([A-Za-z0-9_.-]{0,63})\] ")
# kubectl --timestamps (RFC 3339, nanoseconds), journald short-iso, Python logging,
# dmesg --time-format iso
_ISO_BODY = r"\d{4}-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(?:Z|[+-]\d\d:?\d\d)?"
_ISO = re.compile(_ISO_BODY + r"(?: {1,4}|\t|$)")
_ISO_BRACKETED = re.compile(r"\[" + _ISO_BODY + r"\](?: {1,4}|\t|$)")
# glog and c10 logging: "E1202 12:01:00.512331  1234 file.cc:12] ", PyTorch wraps it in "[...]"
_GLOG = re.compile(
    r"\[?([EWIF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9}) {1,12}(\d{1,10}) "
    r"([^\s\]:]{1,400}):(\d{1,7})\] ?"
)
# vLLM: "INFO 12-02 12:01:00 [file.py:12] ", before 0.7 "INFO 12-02 12:01:00 file.py:12] "
_SHORT = re.compile(
    r"(INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? "
    r"(?:\[[\w./:-]{1,200}\] |[\w./-]{1,200}:\d{1,6}\] )?"
)
# [rank3]: global, [default3]: / [trainer3]: local
_TORCHRUN = re.compile(r"\[([a-z_]{1,32})(\d{1,7})\]: ?")
_MPI = re.compile(r"\[\d{1,10},(\d{1,7})\]<(stdout|stderr|stddiag)>: ?")  # mpirun --tag-output
_RAY = re.compile(
    r"\((?:([^\s()\[\]]{1,200})(?:\[rank=(\d{1,7})\])? )?pid=(\d{1,10})(?:, "
    r"ip=([0-9A-Za-z.:-]{1,64}))?\) ?"
    r"|\((raylet|autoscaler|gcs_server)(?: \+[\dhms]{1,16})?(?:, ip=([0-9A-Za-z.:-]{1,64}))?\) ?"
)
# srun --label: "%*d: ", het jobs "P%u %*d: "
_SRUN = re.compile(r" {0,7}(?:P(\d{1,5}) +)?(\d{1,7}): ")
_HOST = re.compile(r"([a-z][a-z0-9.-]{0,252}): ")  # pdsh / DeepSpeed's pdsh launcher: "worker-1: "
_NCCL = re.compile(r"([\w.-]{1,253}):(\d{1,10}):(\d{1,10}) \[(\d{1,4})\] ")
_SYSLOG = re.compile(
    r"([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))? ([\w.-]{1,253}) "
    r"([\w./-]{1,64})(?:\[(\d{1,10})\])?: "
)
# after an ISO stamp
_SYSLOG_TAIL = re.compile(r"([\w.-]{1,253}) ([\w./-]{1,64})(?:\[(\d{1,10})\])?: ")
_DMESG = re.compile(r"\[ {0,12}\d{1,10}\.\d{1,9}\] ?")
_DMESG_T = re.compile(
    r"\[[A-Z][a-z]{2} ([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d) \d{4}\] ?"
)


def parse_line(line: str) -> Line:
    """Peel every known prefix off `line`, in whatever order they were stacked."""
    out = Line(text=line)
    pos = 0
    for _ in range(MAX_PEELS):
        end = _peel(line, pos, out)
        if end is None or end <= pos:
            break
        pos = end
    out.text = line[pos:]
    return out


def _peel(line: str, pos: int, out: Line) -> int | None:
    """Consume one prefix at `pos` into `out`; its end, or None when no prefix starts there."""
    if pos >= len(line):
        return None
    c = line[pos]
    if c == "[":
        return _peel_bracket(line, pos, out)
    if c == "(":
        if m := _RAY.match(line, pos):
            if m.group(3):
                out.source = out.source or m.group(1) or "ray"
                if m.group(2) and out.rank is None:
                    out.rank = int(m.group(2))
                out.pid = int(m.group(3))
                ip = m.group(4)
            else:
                out.source, ip = out.source or m.group(5), m.group(6)
            if ip and out.node is None:
                out.node = ip
            return m.end()
        return None
    if c.isdigit() and (m := _ISO.match(line, pos)) and (ts := _iso_stamp(m)):
        out.timestamp = out.timestamp or ts
        end = m.end()
        # rsyslog RFC 3339 and journald short-iso: "<stamp> node03 kernel: " (a daemon shows its
        # pid)
        if (t := _SYSLOG_TAIL.match(line, end)) and (t.group(2) == "kernel" or t.group(3)):
            out.node = out.node or t.group(1)
            out.source = t.group(2)
            out.pid = out.pid or (int(t.group(3)) if t.group(3) else None)
            end = t.end()
        return end
    if (c == " " or c.isdigit() or c == "P") and out.rank is None and (m := _SRUN.match(line, pos)):
        out.rank = int(m.group(2))
        return m.end()
    if c.isalpha():
        if c in "EWIF" and (m := _GLOG.match(line, pos)):
            return _glog(m, out)
        if c in "IWEDC" and (m := _SHORT.match(line, pos)):
            out.level = m.group(1)
            out.timestamp = out.timestamp or _stamp(
                int(m.group(2)), int(m.group(3)), *m.group(4, 5, 6, 7)
            )
            return m.end()
        if c.isupper() and (m := _SYSLOG.match(line, pos)) and m.group(1) in _MONTHS:
            out.timestamp = out.timestamp or _stamp(
                _MONTHS[m.group(1)], int(m.group(2)), *m.group(3, 4, 5, 6)
            )
            out.node = out.node or m.group(7)
            out.source = m.group(8)
            if m.group(9):
                out.pid = int(m.group(9))
            return m.end()
    if (c.isalnum() or c in "_.-") and (m := _NCCL.match(line, pos)):
        out.node = out.node or m.group(1)
        out.pid = int(m.group(2))
        out.device = int(m.group(4))
        return m.end()
    # pdsh wraps everything the remote side prints, so it comes before any launcher prefix (behind a
    # collector's, as in a launcher pod's kubectl logs); further in, "word1: " is the message's own
    if (
        "a" <= c <= "z"
        and _collected_only(out)
        and (m := _HOST.match(line, pos))
        and any(ch.isdigit() for ch in m.group(1))
    ):
        out.node = m.group(1)  # the host the line came from, not the pod that collected it
        return m.end()
    return None


def _collected_only(out: Line) -> bool:
    """Nothing but a collector's prefixes (kubectl's pod and stamp) peeled so far."""
    return (
        out.rank is None
        and out.local_rank is None
        and out.pid is None
        and out.device is None
        and (out.node is None or (out.source or "").startswith("pod/"))
        and out.level is None
    )


def _peel_bracket(line: str, pos: int, out: Line) -> int | None:
    if line.startswith("[pod/", pos) and (m := _POD.match(line, pos)):
        out.source = f"pod/{m.group(1)}/{m.group(2)}"
        out.node = out.node or m.group(1)
        return m.end()
    if m := _TORCHRUN.match(line, pos):
        kind, number = m.group(1), int(m.group(2))
        if kind == "rank":
            out.rank = number if out.rank is None else out.rank
        elif kind not in ("pid", "tid", "errno", "step", "epoch", "iter"):
            out.local_rank = number if out.local_rank is None else out.local_rank
        else:
            return None
        return m.end()
    if m := _MPI.match(line, pos):
        if out.rank is None:
            out.rank = int(m.group(1))
        out.source = out.source or m.group(2)
        return m.end()
    if (m := _ISO_BRACKETED.match(line, pos)) and (ts := _iso_stamp(m)):
        out.timestamp = out.timestamp or ts
        return m.end()
    if m := _GLOG.match(line, pos):
        return _glog(m, out)
    if m := _DMESG.match(line, pos):
        out.source = out.source or "kernel"
        return m.end()
    if m := _DMESG_T.match(line, pos):
        out.source = out.source or "kernel"
        if m.group(1) in _MONTHS:
            out.timestamp = out.timestamp or _stamp(
                _MONTHS[m.group(1)], int(m.group(2)), m.group(3), m.group(4), m.group(5), None
            )
        return m.end()
    return None


def _iso_stamp(m: re.Match[str]) -> Stamp | None:
    return _stamp(int(m.group(1)), int(m.group(2)), *m.group(3, 4, 5, 6))


def _glog(m: re.Match[str], out: Line) -> int:
    out.level = m.group(1)
    out.timestamp = out.timestamp or _stamp(int(m.group(2)), int(m.group(3)), *m.group(4, 5, 6, 7))
    return m.end()


# -- a timestamp anywhere near the start of a message
# ------------------------------------------------------

_ANY_GLOG = re.compile(r"\b[EWIF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?")
_ANY_ISO = re.compile(r"\b\d{4}-(\d\d)-(\d\d)[T _](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
_ANY_SYSLOG = re.compile(
    r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)"
)
_ANY_SHORT = re.compile(
    r"\b(?:INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
)


def parse_timestamp(text: str, window: int = 120) -> Stamp | None:
    """The first timestamp within `window` characters of the start of `text` (a message whose
    time sits after a logger name, say), in any of the formats above."""
    head = text[:window]
    best: tuple[int, Stamp] | None = None
    for regex in (_ANY_GLOG, _ANY_ISO, _ANY_SYSLOG, _ANY_SHORT):
        if (m := regex.search(head)) and (best is None or m.start() < best[0]):
            g = m.groups()
            month = _MONTHS[g[0]] if regex is _ANY_SYSLOG else int(g[0])
            frac = g[5] if len(g) > 5 else None
            if (ts := _stamp(month, int(g[1]), g[2], g[3], g[4], frac)) is not None:
                best = (m.start(), ts)
    return best[1] if best else None
