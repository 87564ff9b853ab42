"""Spot a plain bug in the user's own code: a Python traceback whose innermost frame is the user's
file and whose exception carries no infrastructure signal.

Pure: text in, `UserFrame | None` out. The engine asks only when no failure entry has strong
fingerprint evidence, so this module judges the traceback alone. Handles launcher/rank prefixes
(`[rank3]:`, `[default0]:`, `3: `), interleaved multi-rank output (the first rank with a traceback
is read), chained exceptions (every exception of the chain must be free of infrastructure signals),
and DataLoader re-raises ("Caught KeyError in DataLoader worker process 0" + "Original Traceback":
the worker's traceback is the one that names the bug).

Every regex here is linear-time (no backreferences or lookaround).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.model import UserFrame

# Launcher prefixes before a traceback line: torchrun's [rank3]: / [default0]:, deepspeed's "3: ",
# mpirun's [1,0]<stderr>:, Ray's "(RayWorker pid=12) ".
_PREFIX = re.compile(
    r"^(?:\[(?:rank|default)(\d+)\]:|(\d{1,5}): |\[\d+,(\d+)\]<std(?:out|err)>:|\([A-Za-z]\w*(?: "
    r"pid=\d+)?(?:, ip=[\d.]+)?\) )"
)
_START = re.compile(r"^\s*(?:Original )?Traceback \(most recent call last\):\s*$")
_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+)(?:, in (\S+))?')
# The exception line ends a traceback block: a dotted name, then ": message" or nothing.
_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?:: ?(.*))?$")
_EXCEPTION_NAME = re.compile(
    r"(?:Error|Exception|Exit|Interrupt|Warning|Iteration|Failure|NotFound)$"
)
_BARE_EXCEPTIONS = frozenset(
    {"KeyError", "StopIteration", "AssertionError", "KeyboardInterrupt", "NotImplementedError"}
)

# Path components that mark a library frame in a source checkout (installed packages are caught by
# site-packages/dist-packages). Only distinctive names: a user's own "datasets/" or "models/"
# directory is user code.
LIBRARY_PARTS = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "transformers",
        "vllm",
        "deepspeed",
        "accelerate",
        "megatron",
        "apex",
        "triton",
        "flash_attn",
        "xformers",
        "peft",
        "trl",
        "sglang",
        "text_generation_server",
        "colossalai",
        "fairscale",
        "bitsandbytes",
        "pytorch_lightning",
        "huggingface_hub",
        "safetensors",
        "site-packages",
        "dist-packages",
    }
)
# Exceptions that say the caller misused an API (a typo'd attribute, a wrong keyword, a missing
# key):
# raised a few frames inside a library, the bug is still in the user's frame that made the call.
CALLER_ERRORS = re.compile(
    r"(?:^|\.)(?:AttributeError|TypeError|NameError|UnboundLocalError|KeyError|IndexError|ZeroDivisionError|"
    r"RecursionError|JSONDecodeError)$"
)
MAX_LIBRARY_TAIL = 3  # library frames between the user's call and the raise: more is library logic
_STDLIB = re.compile(
    r"(?i)[/\\]lib[/\\]python\d(?:\.\d+)?[/\\]|^<frozen |^<string>$|^<__array_function__"
)

# Exception types that are the environment or the platform, never "a bug in your code". RuntimeError
# is how torch's C++ ops fail, so it surfaces at the user's line that called the op.
INFRA_TYPES = re.compile(
    r"(?:^|\.)(?:RuntimeError|OutOfMemoryError|DistBackendError|DistNetworkError|DistStoreError|DistError|"
    r"ImportError|ModuleNotFoundError|OSError|IOError|MemoryError|PermissionError|FileNotFoundError|"
    r"ConnectionError|ConnectionResetError|ConnectionRefusedError|BrokenPipeError|TimeoutError|"
    r"RendezvousClosedError|RendezvousTimeoutError|RendezvousError|"
    r"SystemExit|KeyboardInterrupt|AcceleratorError|CUDAError|NCCLError|ProcessExitedException|"
    r"SignalException|TorchRuntimeError|InductorError|BackendCompilerFailed|Unsupported|"
    r"CompilationError|OutOfResources|HFValidationError|RepositoryNotFoundError|GatedRepoError|"
    r"EntryNotFoundError|LocalEntryNotFoundError|OfflineModeIsEnabled|EngineDeadError|AsyncEngineDeadError)$"
)
# Words in an exception message that point at GPUs, communication, memory, storage or the
# toolchain: such an error is a platform problem even when user code raised it.
INFRA_WORDS = re.compile(
    r"(?i)\b(?:cuda|cudnn|cublas\w*|cufft|curand|cusolver|cusparse|nccl\w*|gloo|mpi|hccl|rocm|hip|xla|tpu|"
    r"gpus?|device[- ]side|illegal memory|out of memory|oom|memory|xid|ecc|nvlink|nvml|nvidia|"
    r"driver|"
    r"infiniband|ibv\w*|rdma|roce|efa|socket|connection|connect|network|timed out|timeout|"
    r"rendezvous|process ?group|distributed|collective|all_?reduce|barrier|rank|world[_ ]size|"
    r"no space|disk|quota|read-only|shared memory|shm|bus error|segmentation|signal|sigkill|"
    r"sigterm|"
    r"killed|triton|inductor|dynamo|compile[d]?|ptxas|nvcc|kernel|libcuda|undefined symbol|\.so\b|"
    r"version|mismatch(?:ed)? (?:between|versions?)|deepspeed|fsdp|megatron|vllm|checkpoint shard|"
    r"nan|inf|infinity|overflow|underflow|diverg\w*|gradients?|loss scal\w*)\b"
    # a module missing an attribute is a version mismatch, not a typo
    r"|module '[\w.]+' has no attribute"
)


# A launcher's summary that a child process failed (torchrun, accelerate/deepspeed launchers):
# it follows the child's own traceback and says nothing about where the bug is.
_LAUNCHER_SUMMARY = re.compile(r"(?:^|\.)(?:ChildFailedError|CalledProcessError)$")


@dataclass
class _Block:
    """One traceback: its frames (innermost last) and the exception line that closed it."""

    frames: list[tuple[str, int, str]] = field(default_factory=list)
    exception: str = ""
    message: str = ""
    worker: bool = False  # "Original Traceback" of a DataLoader worker re-raise


def is_library(path: str) -> bool:
    """True for frames in frameworks, installed packages, the stdlib or Python internals."""
    if _STDLIB.search(path):
        return True
    parts = {p.lower() for p in re.split(r"[/\\]", path) if p}
    return bool(parts & LIBRARY_PARTS)


def _lines_of_one_rank(text: str) -> list[str]:
    """The lines without launcher prefixes; with several ranks interleaved, only the first rank that
    printed a traceback (ranks usually raise the same thing; mixing them garbles the frames)."""
    stripped: list[tuple[str | None, str]] = []
    first_rank: str | None = None
    for raw in text.split("\n"):
        rank: str | None = None
        line = raw.rstrip("\r")
        while (m := _PREFIX.match(line)) is not None:
            rank = m.group(1) or m.group(2) or m.group(3) or rank
            line = line[m.end() :]
            if line.startswith(" ") and not line.startswith("  "):
                line = line[1:]  # "[rank0]: Traceback" -> "Traceback"; keep frame indentation
        if first_rank is None and rank is not None and _START.match(line):
            first_rank = rank
        stripped.append((rank, line))
    if first_rank is None:
        return [line for _, line in stripped]
    return [line for rank, line in stripped if rank is None or rank == first_rank]


def _exception_line(line: str) -> tuple[str, str] | None:
    if not line or line[0].isspace():
        return None
    m = _EXCEPTION.match(line.rstrip())
    if m is None:
        return None
    name = m.group(1)
    last = name.rsplit(".", 1)[-1]
    if not last[:1].isupper() or not (_EXCEPTION_NAME.search(last) or last in _BARE_EXCEPTIONS):
        return None
    return name, (m.group(2) or "").strip()


def tracebacks(text: str) -> list[_Block]:
    """Every complete traceback in order (a chain prints its causes first)."""
    blocks: list[_Block] = []
    current: _Block | None = None
    for line in _lines_of_one_rank(text):
        if _START.match(line):
            current = _Block(worker=line.lstrip().startswith("Original"))
            continue
        if current is None:
            continue
        if m := _FRAME.match(line):
            current.frames.append((m.group(1), int(m.group(2)), m.group(3) or "<module>"))
            continue
        if (exc := _exception_line(line)) is not None:
            current.exception, current.message = exc
            blocks.append(current)
            current = None
    return [b for b in blocks if b.frames and not _LAUNCHER_SUMMARY.search(b.exception)]


def _infra(block: _Block) -> bool:
    return bool(
        INFRA_TYPES.search(block.exception)
        or INFRA_WORDS.search(f"{block.exception} {block.message}")
    )


TAIL_CHARS = 256 << 10  # a failed run's last traceback is near the end of its log


def user_frame(text: str) -> UserFrame | None:
    """The user's frame that raised, when the last traceback ends in user code with no platform
    signal in any exception of its chain; else None. Reads the tail of a huge log only."""
    if len(text) > TAIL_CHARS:
        text = text[text.find("\n", len(text) - TAIL_CHARS) + 1 :]
    blocks = tracebacks(text)
    if not blocks:
        return None
    workers = [b for b in blocks if b.worker]
    # A DataLoader re-raise prints the main-process traceback (ending in torch/_utils.py) and then
    # the worker's: the worker's names the bug.
    last = workers[-1] if workers else blocks[-1]
    if any(_infra(b) for b in blocks):
        return None
    frames = last.frames
    tail = 0
    while tail < len(frames) and is_library(frames[-1 - tail][0]):
        tail += 1
    if tail == len(frames) or (
        tail and (tail > MAX_LIBRARY_TAIL or not CALLER_ERRORS.search(last.exception))
    ):
        return None
    path, line, function = frames[-1 - tail]
    return UserFrame(
        file=path,
        line=line,
        function=function,
        exception=last.exception,
        message=last.message[:300],
    )


# argparse's refusal: "usage: train.py [-h] ..." then "train.py: error: unrecognized arguments: ..."
# (exit status 2, no traceback); launcher prefixes are stripped as for tracebacks.
_USAGE = re.compile(r"usage: (\S+)")
_USAGE_ERROR = re.compile(r"(\S+): error: (.+)$")


def usage_error(text: str) -> UserFrame | None:
    """The last command-line refusal of an argparse-style parser in the log's tail: its error
    line must name the same program as a usage line printed before it."""
    if len(text) > TAIL_CHARS:
        text = text[text.find("\n", len(text) - TAIL_CHARS) + 1 :]
    shown: set[str] = set()  # programs whose usage line has been printed so far
    last: re.Match[str] | None = None
    explained = False
    for line in _lines_of_one_rank(text):
        if m := _USAGE.match(line):
            shown.add(m.group(1))
        elif m := _USAGE_ERROR.match(line):
            last, explained = m, m.group(1) in shown
    if last is None or not explained:
        return None
    return UserFrame(
        file=last.group(1),
        line=0,
        function="command-line arguments",
        exception="usage error",
        message=last.group(2).strip()[:300],
        kind="usage",
    )
