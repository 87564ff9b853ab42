"""The line-prefix grammar (index/prefixes.py): every launcher's and collector's prefix, stacked in
any order, peeled off without ever losing the message."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from index.prefixes import parse_line
from index.query_text import clip_around, strip_prefix
from index.sources import parse_source_name, same_node

MESSAGE = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB"


@pytest.mark.parametrize(
    ("line", "facts"),
    [
        # kubectl logs --timestamps, then --prefix --timestamps (prefix first, as kubectl writes it)
        (f"2026-12-02T12:03:11.123456789Z [rank2]: {MESSAGE}", {"rank": 2, "clock": "12:03:11"}),
        (f"[pod/trainer-worker-2/pytorch] 2026-12-02T12:03:11.5Z [rank10]: {MESSAGE}",
         {"rank": 10, "node": "trainer-worker-2", "source": "pod/trainer-worker-2/pytorch", "clock": "12:03:11"}),
        (f"[default3]:{MESSAGE}", {"local_rank": 3}),  # torchrun --tee
        (f"[trainer3]:{MESSAGE}", {"local_rank": 3}),  # torchrun --role trainer
        (f" 7: {MESSAGE}", {"rank": 7}),  # srun --label pads to the widest task id
        (f"P1  7: {MESSAGE}", {"rank": 7}),  # srun --label, heterogeneous job
        (f"[1,3]<stderr>:{MESSAGE}", {"rank": 3, "source": "stderr"}),  # mpirun --tag-output
        (f"worker-1: [rank9]: {MESSAGE}", {"rank": 9, "node": "worker-1"}),  # pdsh / DeepSpeed
        (f"(RayTrainWorker pid=4242, ip=10.0.1.11) {MESSAGE}", {"pid": 4242, "node": "10.0.1.11", "source": "RayTrainWorker"}),
        (f"(raylet, ip=10.0.1.11) {MESSAGE}", {"node": "10.0.1.11", "source": "raylet"}),
        (f"[rank3]:[E1202 12:03:11.123456789 4242 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:632] {MESSAGE}",
         {"rank": 3, "clock": "12:03:11"}),
        (f"E1202 12:03:11.123456  4242 ProcessGroupNCCL.cpp:632] {MESSAGE}", {"clock": "12:03:11"}),  # glog
        (f"node02:4242:4301 [3] {MESSAGE}", {"node": "node02", "pid": 4242}),  # NCCL's host:pid:tid [dev]
        (f"Dec  2 12:03:11 node03 kernel: [ 8812.112233] {MESSAGE}", {"node": "node03", "source": "kernel", "clock": "12:03:11"}),
        (f"Dec 02 12:03:11 node03 kernel: {MESSAGE}", {"node": "node03", "source": "kernel"}),  # journalctl -k
        (f"2026-12-02T12:03:11+0000 node03 kernel: {MESSAGE}", {"node": "node03", "source": "kernel"}),  # short-iso
        (f"[Wed Dec  2 12:03:11 2026] {MESSAGE}", {"source": "kernel", "clock": "12:03:11"}),  # dmesg -T
        (f"[ 8812.112233] {MESSAGE}", {"source": "kernel"}),  # dmesg
        (f"[2026-12-02 12:03:11,123] {MESSAGE}", {"clock": "12:03:11"}),  # Python logging
        (f"INFO 12-02 12:03:11 [worker.py:1] {MESSAGE}", {"clock": "12:03:11"}),  # vLLM
        (f"[1,3]<stdout>:(RayTrainWorker pid=9, ip=10.0.0.2) [default1]:{MESSAGE}", {"rank": 3, "local_rank": 1, "pid": 9}),
    ],
)
def test_each_prefix_is_peeled(line, facts):
    parsed = parse_line(line)
    assert parsed.text == MESSAGE
    for name, value in facts.items():
        got = parsed.timestamp.clock if name == "clock" else getattr(parsed, name)
        assert got == value, name


@pytest.mark.parametrize(
    "line",
    ["Traceback (most recent call last):", "warning: no digits in this word", "epoch: 3 done", "  File \"x.py\", line 3",
     "[rank]: not a rank", "(not ray) text", "2026-13-45T99:99:99Z looks like a time but is not"],
)
def test_a_message_without_prefixes_is_left_alone(line):
    assert parse_line(line).text == line


# Prefixes as each tool prints them, by layer from the outermost wrapper in: a collector (kubectl),
# its stamps, a remote shell (pdsh), a launcher (srun, mpirun, Ray), torchrun, then what the
# program's own logger or the kernel prints. A line carries at most one of each layer.
LAYERS = [
    ["[pod/trainer-master-0/pytorch] "],
    ["2026-12-02T12:03:11.123456789Z "],
    ["worker-1: "],
    [" 7: ", "12: ", "[1,3]<stderr>:", "[1,3]<stdout>:"],
    ["(RayTrainWorker pid=4242, ip=10.0.1.11) ", "(pid=77) "],
    ["[rank12]:", "[default3]:"],
    ["Dec  2 12:03:11 node03 kernel: ", "[Wed Dec  2 12:03:11 2026] ", "[ 8812.112233] ",
     "[E1202 12:03:11.123456 4242 ProcessGroupNCCL.cpp:632] ", "node02:4242:4301 [3] ", "[2026-12-02 12:03:11,123] "],
]
STACKS = st.tuples(*[st.one_of(st.just(""), st.sampled_from(layer)) for layer in LAYERS])
# A message that starts like no prefix does, then anything.
MESSAGES = st.builds(lambda head, tail: head + tail, st.sampled_from(["Traceback", "RuntimeError:", "NCCL WARN", "Xid"]),
                     st.text(max_size=200))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_and_the_message_is_a_suffix(line):
    parsed = parse_line(line)
    assert line.endswith(parsed.text)
    strip_prefix(line)


@settings(max_examples=500, deadline=None)
@given(STACKS, MESSAGES)
def test_stacked_prefixes_never_lose_the_message(stack, message):
    line = "".join(stack) + message
    assert parse_line(line).text == message


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=600), st.data())
def test_clip_around_keeps_the_match(text, data):
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, min(len(text), start + 40)))
    clipped = clip_around(text, start, end, 120)
    assert len(clipped) <= 120
    assert text[start:end] in clipped


def test_file_names_say_node_rank_and_kind():
    assert parse_source_name("node03-dmesg.txt").kernel
    assert parse_source_name("logs/trainer-master-0.log").node == "trainer-master-0"
    assert parse_source_name("rank7.log").rank == 7
    assert parse_source_name("run/attempt_0/3/stderr.log").local_rank == 3
    assert same_node("trainer-worker-2", "worker-2") and same_node("node03.cluster.local", "NODE03")
    assert not same_node("node03", "node13")
