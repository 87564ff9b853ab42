"""Redaction: every secret form of the corpus is masked, ordinary ML log lines are left alone,
in one linear-time pass (Hyperscan, and the RE2 fallback gives the same text)."""

from __future__ import annotations

import threading

import pytest

import bot.redact as redact_module
from bot.redact import MASK, redact
from bot.redact_rules import all_rules
from index.scanner import MultiScanner
from tests.fakes.secret_corpus import (
    ALL_SECRETS,
    CORPUS,
    KEEP,
    ONE_LINE_KEY,
    ONE_LINE_KEY_SECRET,
    PEM_CUT,
    PEM_FULL,
    PEM_FULL_SECRET,
    PEM_SECRETS,
)

LOG_BEFORE = "[rank0]: step 100 loss 1.234\n"
LOG_AFTER = "\n[rank0]: RuntimeError: CUDA error: out of memory\n"


def test_corpus_is_large_enough():
    assert len(ALL_SECRETS) >= 60 and len(set(ALL_SECRETS)) == len(ALL_SECRETS)


@pytest.mark.parametrize("line, secret", CORPUS, ids=[s[:24] for _, s in CORPUS])
def test_secret_form_is_masked(line, secret):
    out = redact(LOG_BEFORE + line + LOG_AFTER)
    assert secret not in out and MASK in out
    assert out.startswith(LOG_BEFORE) and out.endswith(LOG_AFTER)  # neighbours untouched


def test_private_keys_cut_before_end_full_and_on_one_line():
    cut = redact(LOG_BEFORE + PEM_CUT)
    assert not any(s in cut for s in PEM_SECRETS) and cut.startswith(LOG_BEFORE)
    full = redact(PEM_FULL + "after the key\n")
    assert PEM_FULL_SECRET not in full and full.endswith("after the key\n")
    assert ONE_LINE_KEY_SECRET not in redact(ONE_LINE_KEY)


def test_a_cut_key_stops_masking_at_the_first_ordinary_line():
    out = redact(PEM_CUT + "Traceback (most recent call last):\n")
    assert out.endswith("Traceback (most recent call last):\n")


@pytest.mark.parametrize("line", KEEP)
def test_ordinary_log_lines_are_unchanged(line):
    assert redact(line) == line


def test_redaction_is_idempotent_and_keeps_names():
    once = redact("DB_PASSWORD=hunter2hunter2 url=postgres://u:pw12345@db/x")
    assert once == "DB_PASSWORD=[REDACTED] url=postgres://u:[REDACTED]@db/x"
    assert redact(once) == once


def test_non_ascii_text_around_a_secret():
    out = redact("étape 3 — ошибка HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 ✓")
    assert out == "étape 3 — ошибка HF_TOKEN=[REDACTED] ✓"


def test_re2_fallback_masks_the_same(monkeypatch):
    text = "\n".join(line for line, _ in CORPUS) + "\n" + PEM_CUT + "\n".join(KEEP)
    expected = redact(text)
    rules = all_rules()
    monkeypatch.setattr(
        redact_module, "_compiled", (rules, MultiScanner([r.scan_pattern for r in rules], force_re2=True))
    )
    assert redact(text) == expected


def test_concurrent_redaction_from_many_threads():
    text = ("[rank1]: step 1 loss 2.0\n" * 5000) + "token=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345\n"
    expected = redact(text)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(redact(text) == expected)
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and results == [True] * 40
