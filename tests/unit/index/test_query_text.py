"""The retrievers' query text: error lines picked from a log, repeats parsed once."""

from index.query_text import evidence_text

HEAD = [
    "[rank0]:[2026-03-02 10:14:03] step 1200 | loss 2.3141 | lr 2.9e-4",
    "[rank1]: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
]
TAIL = [
    "[rank1]: Traceback (most recent call last):",
    '[rank1]:   File "/opt/conda/lib/python3.11/site-packages/torch/distributed/checkpoint/state_dict_saver.py", line 1, in save',
    "[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited",
]


def test_a_flood_of_one_line_gives_the_same_query_as_one_copy() -> None:
    flood = ["[rank1]: UserWarning: TypedStorage is deprecated, retrying the same call again"] * 5000
    once = evidence_text("\n".join(HEAD + flood[:1] + TAIL))
    assert evidence_text("\n".join(HEAD + flood + TAIL)) == once
    assert "DistBackendError" in once and "TypedStorage" in once


def test_hit_lines_come_first_even_when_repeated() -> None:
    hit = "[rank4]: NCCL WARN NET/IB : Got completion from peer with error 12"
    lines = [hit] * 3 + [f"[rank5]: error {i} while reading shard {i}" for i in range(200)]
    text = "\n".join(lines)
    out = evidence_text(text, hit_lines=frozenset({1, 2, 3}), limit=120)
    assert out.split("\n")[0] == "NCCL WARN NET/IB : Got completion from peer with error 12"
