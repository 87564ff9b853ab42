import gzip

import pytest

from bot.ingest import IngestError, build_report, decode, looks_like_log, normalize, report_from_bytes, report_from_text
from bot.model import LogFile
from bot.redact import redact


def test_ansi_crlf_nul_and_control_bytes_are_removed():
    raw = "\x1b[1;31mRuntimeError\x1b[0m: CUDA error\r\nnext\x00 line\x07\r\n"
    assert normalize(raw) == "RuntimeError: CUDA error\nnext line\n"


def test_slack_escapes_mentions_links_and_fences():
    raw = "<@U024BE7LH> ```RuntimeError: a &lt; b &amp;&amp; c &gt; d\nsee <https://x.org/a|the docs>```"
    assert normalize(raw, slack=True).strip() == "RuntimeError: a < b && c > d\nsee the docs"
    # a literal "&lt;" typed by the user arrives as "&amp;lt;" and must stay "&lt;"
    assert normalize("&amp;lt;", slack=True) == "&lt;"


def test_binary_is_rejected_with_a_clear_error():
    with pytest.raises(IngestError, match="binary"):
        decode(bytes(range(256)) * 100)


def test_invalid_utf8_is_replaced_not_fatal():
    assert "\ufffd" in decode(b"RuntimeError: bad \xff\xfe byte\n")


def test_gzip_is_decompressed_and_corrupt_gzip_is_an_error():
    assert decode(gzip.compress(b"NCCL WARN hello\n")) == "NCCL WARN hello\n"
    with pytest.raises(IngestError, match="gzip"):
        decode(b"\x1f\x8b" + b"garbage" * 10)


def test_empty_input_is_an_error():
    with pytest.raises(IngestError, match="empty"):
        report_from_text("  \n\t ")
    with pytest.raises(IngestError):
        report_from_bytes([("a.log", b""), ("b.log", b"\n\n")])


def test_one_ten_megabyte_line_is_clipped():
    text = normalize("x" * (10 << 20) + "\nRuntimeError: boom")
    first, second = text.split("\n")
    assert len(first) < 5000 and "clipped" in first and second == "RuntimeError: boom"


def test_log_or_question():
    assert looks_like_log("Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: x")
    assert not looks_like_log("why does dcp.save hang at 64 GPUs?")
    assert build_report([LogFile(name="q", text="how do I set NCCL_IB_GID_INDEX?")]).kind == "question"
    assert build_report([LogFile(name="a", text="hi"), LogFile(name="b", text="there")]).kind == "log"
    # a pasted Python warning (the warnings module's "path:line: Category: message" and the
    # source line under it) is a log, not a question
    warning = "/opt/venv/lib/python3.11/site-packages/x/y.py:41: FutureWarning: `a` is deprecated\n  a()\n"
    assert looks_like_log(warning)


@pytest.mark.parametrize(
    "secret, kept",
    [
        ("export SLACK_BOT_TOKEN=xoxb-1234567890-abcdefghijkl", "SLACK_BOT_TOKEN="),
        ("token xapp-1-A0123-456789-abcdef", "token "),
        ("postgres://train:hunter2@db.internal:5432/runs", "postgres://train:"),
        ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123", "HF_TOKEN="),
        ("aws key AKIAIOSFODNN7EXAMPLE in env", "aws key "),
        ("Authorization: Bearer abc.def.ghi", "Authorization: Bearer "),
        ('{"api_key": "sk-proj-abcdefghijklmnopqrstuvwx"}', '"api_key"'),
        ("--password hunter22 --epochs 3", "--epochs 3"),
        ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "WANDB_API_KEY="),
    ],
)
def test_secrets_are_redacted(secret, kept):
    out = redact(secret)
    assert "[REDACTED]" in out and kept in out
    for fragment in ("hunter2", "xoxb-1234567890", "hf_abcdefghij", "AKIAIOSFODNN7", "sk-proj-abc", "abc.def.ghi", "0123456789abcdef0123"):
        assert fragment not in out


@pytest.mark.parametrize(
    "harmless",
    [
        "Token indices sequence length is longer than the specified maximum",
        "max_tokens: 4096",
        "TOKENIZERS_PARALLELISM=false",
        "the token was rejected",
        "NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
    ],
)
def test_ordinary_log_lines_survive_redaction(harmless):
    assert redact(harmless) == harmless


def test_ingest_redacts_before_anything_else_sees_the_text():
    report = report_from_text("RuntimeError: connect failed for postgres://u:topsecret@h/db\nTraceback")
    assert "topsecret" not in report.text


@pytest.mark.parametrize(
    "text",
    [
        # vLLM's logger and uvicorn's access log (a healthy server says nothing else)
        "INFO 12-03 09:14:27 [loggers.py:116] Engine 000: Avg prompt throughput: 812.5 tokens/s\n"
        'INFO:     10.0.0.7:51514 - "POST /v1/completions HTTP/1.1" 200 OK\n',
        # Megatron's iteration lines
        " iteration      120/   50000 | consumed samples:        61440 | lm loss: 6.118204E+00 |\n"
        " iteration      130/   50000 | consumed samples:        66560 | lm loss: 6.050911E+00 |\n",
        # tqdm bars and HF Trainer metrics dicts
        " 12%|█▏        | 120/1000 [01:02<07:38,  1.92it/s]\n{'loss': 1.7342, 'grad_norm': 0.91}\n",
        # TORCH_WARN in its short glog form
        "epoch 3:\n[W pthreadpool-cpp.cc:90] Warning: Leaking Caffe2 thread-pool after fork.\n",
        # nvidia-smi's process table
        "|    0   N/A  N/A   41822      C   python3                      30112MiB |\n"
        "|    1   N/A  N/A   41823      C   python3                      30108MiB |\n",
    ],
)
def test_logs_of_healthy_runs_are_logs(text):
    assert looks_like_log(text)


@pytest.mark.parametrize(
    "text",
    [
        "why does dcp.save hang at 64 GPUs?",
        "our job hangs at the first allreduce after 10:00 every night.\nWhat should I check first?",
        "Is INFO-level NCCL output enough to debug a hang, or do I need TRACE?",
        "what does 'grad_norm: nan' in the trainer output mean?",
    ],
)
def test_questions_stay_questions(text):
    assert not looks_like_log(text)
