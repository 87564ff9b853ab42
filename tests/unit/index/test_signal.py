"""index.signal: does a log say something went wrong, or only warn?"""

from __future__ import annotations

import pytest

from index.signal import error_signal, only_warnings, with_attached_tracebacks

PY_WARNING = (
    "/opt/venv/lib/python3.11/site-packages/torch/autograd/graph.py:825: UserWarning: Plan failed "
    "with a cudnnException: CUDNN_STATUS_NOT_SUPPORTED (Triggered internally at conv.cpp:919.)\n"
    "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine\n"
)


@pytest.mark.parametrize(
    "text",
    [
        PY_WARNING,  # words of trouble inside the warning and its source line do not count
        PY_WARNING + "epoch 1 step 200 loss 1.93\n",
        "[W1203 10:04:11.512300 4242 socket.cpp:752] [c10d] The client socket has failed to connect\n",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-3]:29500\n",
        "WARNING 12-03 10:00:01 [config.py:812] Failed to detect the platform plugin, using cuda\n",
        "[2026-12-03 10:00:01,201] [WARNING] [stage3.py:2093] 4 pytorch allocator cache flushes\n",
        "2026-12-03 10:00:01.201: W tensorflow/tsl/platform/default/dso_loader.cc:64] Could not "
        "load dynamic library 'libcudart.so.12'; dlerror: libcudart.so.12: cannot open shared "
        "object file\n",
    ],
)
def test_warnings_alone(text):
    assert only_warnings(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "epoch 1 step 200 loss 1.93\n",  # nothing at all: a healthy log, not "only warnings"
        "why does dcp.save hang at 64 GPUs?",
        PY_WARNING + "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        "RuntimeError: CUDA error: an illegal memory access was encountered\n",
        # NCCL prints its errors at level WARN
        "node-1:4242:4300 [3] NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out\n",
        PY_WARNING + "  still indented, but after the source line: failed\n",
    ],
)
def test_not_warnings_alone(text):
    assert not only_warnings(text)


def test_error_signal_ignores_informational_lines():
    assert error_signal("node-1:1:1 [0] NCCL INFO NET/Plugin: Failed to find ncclNetPlugin\n") == 0.0
    assert error_signal("RuntimeError: boom\n") == 1.0
    assert error_signal(PY_WARNING) == 1.0  # a warning that speaks of trouble still signals it


def test_zero_counts_of_trouble_are_not_trouble():
    healthy = (
        " iteration     2000/  200000 | lm loss: 3.412877E+00 | loss scale: 1.0 | grad norm: 0.412 |"
        " number of skipped iterations:   0 | number of nan iterations:   0 |\n"
    )
    assert error_signal(healthy) == 0.0
    assert error_signal(healthy.replace("nan iterations:   0", "nan iterations:   3")) == 1.0
    assert error_signal("eval done: errors=0 timeouts=0, but RuntimeError: boom\n") == 1.0


def test_a_glog_warning_further_down_the_log_counts():
    log = (
        "srun: launching job 4411\n"
        "W1202 02:10:14.410000 23312 torch/distributed/run.py:793] Setting OMP_NUM_THREADS "
        "environment variable for each process to be 1 in default\n"
        "step 10 loss 2.1\n"
    )
    assert only_warnings(log)


def test_a_traceback_printed_under_a_harmless_line_is_part_of_it():
    text = (
        "A matching Triton is not available\n"
        "Traceback (most recent call last):\n"
        '  File "/x/xformers/__init__.py", line 57, in _is_triton_available\n'
        "    import triton\n"
        "ModuleNotFoundError: No module named 'triton'\n"
        "step 1 loss 2.3\n"
    )
    assert with_attached_tracebacks([text], frozenset({1})) == frozenset({1, 2, 3, 4, 5})


def test_a_traceback_further_down_or_in_the_next_file_is_not_attached():
    gap = "harmless notice\nstep 1\nTraceback (most recent call last):\n  File \"a.py\"\nKeyError: 1\n"
    assert with_attached_tracebacks([gap], frozenset({1})) == frozenset({1})
    first, second = "harmless notice", "Traceback (most recent call last):\n  x\nKeyError: 1"
    # line 2 of the joined numbering is the second file's first line: not under the notice
    assert with_attached_tracebacks([first, second], frozenset({1})) == frozenset({1})
    assert with_attached_tracebacks([first, second], frozenset()) == frozenset()


def test_traindocs_own_note_about_a_cut_log_is_not_trouble():
    from bot.ingest import read_text

    warning = (
        "/x/torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will create 16 worker "
        "processes in total. Our suggested max number of worker in current system is 8\n"
    )
    text = read_text([warning.encode() * 2000], max_bytes=20_000)
    assert "[traindoc skipped" in text
    assert only_warnings(text)
    assert error_signal(text) == 0.0


def test_a_traceback_under_a_python_warning_is_a_new_error():
    text = (
        "/x/torch/_utils.py:831: UserWarning: TypedStorage is deprecated.\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 88, in main\n'
        "KeyError: 'label'\n"
    )
    assert with_attached_tracebacks([text], frozenset({1})) == frozenset({1})
