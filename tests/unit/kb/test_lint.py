from kb.lint import static_problems
from kb.load import load_kb
from tests.fakes.kbfactory import entry_dict, write_kb


def _problems(tmp_path, entries):
    return static_problems(load_kb(write_kb(tmp_path, entries)))


def test_clean_kb_has_no_static_problems(tmp_path):
    fp = [{"pattern": r"first sample", "strength": "strong"}]
    assert _problems(tmp_path, [entry_dict("a-entry", fingerprints=fp, siblings=["b-entry"]), entry_dict("b-entry", samples=["x one", "x two"])]) == []


def test_unknown_sibling(tmp_path):
    problems = _problems(tmp_path, [entry_dict("a-entry", siblings=["ghost-entry"])])
    assert problems == ["a-entry: unknown sibling ghost-entry"]


def test_backreference_and_lookahead_are_rejected(tmp_path):
    fps = [{"pattern": r"(a+)\1 sample"}, {"pattern": r"first(?=x) sample"}]
    problems = _problems(tmp_path, [entry_dict("a-entry", fingerprints=fps)])
    assert len(problems) == 2 and all("does not compile in RE2" in p for p in problems)


def test_fingerprint_matching_no_sample(tmp_path):
    problems = _problems(tmp_path, [entry_dict("a-entry", fingerprints=[{"pattern": "never printed"}])])
    assert problems == ["a-entry: fingerprint 'never printed' matches none of its samples"]


def test_two_entries_claiming_the_same_sample_text(tmp_path):
    problems = _problems(tmp_path, [entry_dict("a-entry"), entry_dict("b-entry", samples=["First  sample line", "other"])])
    assert problems == ["b-entry: a sample is also a sample of a-entry"]


def test_ranking_check_finds_a_sample_won_by_another_entry(tmp_path, embedder):
    from bot.diagnose import Engine
    from bot.kb_checks import ranking_problems

    owner = entry_dict(
        "owner-entry",
        fingerprints=[{"pattern": r"ECC error count exceeded", "strength": "strong"}],
        samples=["ECC error count exceeded on GPU 3", "ECC error count exceeded, node down"],
    )
    thief = entry_dict(
        "thief-entry",
        fingerprints=[{"pattern": r"ECC error count exceeded", "strength": "strong"}, {"pattern": r"GPU \d", "strength": "supporting"}],
        samples=["ECC error count exceeded GPU 1", "GPU 2 ECC error count exceeded again"],
    )
    engine = Engine(load_kb(write_kb(tmp_path / "kb", [owner, thief])), embedder=embedder, index_dir=tmp_path / "idx")
    problems = ranking_problems(engine)
    assert ("owner-entry", 0, "thief-entry") in [(p.entry, p.sample, p.winner) for p in problems]
    assert "does not rank its own entry first" in str(problems[0])
    assert not [p for p in problems if p.entry == "thief-entry"]


# -- fingerprint hygiene (issue 11: healthy corpus; issue 13: cross-entry) ---------------------

NET_IB_NO_DEVICE = "node01:3344:3344 [0] NCCL INFO NET/IB : No device found."
HEALTHY_NCCL_START = (
    "node01:3344:3344 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.11<0>\n"
    f"{NET_IB_NO_DEVICE}\n"
    "node01:3344:3344 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.11<0>\n"
    "node01:3344:3344 [0] NCCL INFO Using network Socket\n"
    "node01:3344:3390 [0] NCCL INFO comm 0x55d1c0a0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x1f2e - Init COMPLETE\n"
)


def _healthy(tmp_path, text=HEALTHY_NCCL_START):
    folder = tmp_path / "healthy"
    folder.mkdir(exist_ok=True)
    (folder / "nccl-socket-start.log").write_text(text)
    return folder


def _ib_entry(strength):
    return entry_dict(
        "ib-missing-entry",
        fingerprints=[{"pattern": r"NET/IB : No device found", "strength": strength}, {"pattern": r"first sample", "strength": "strong"}],
    )


def test_a_strong_fingerprint_matching_a_healthy_line_fails(tmp_path):
    from kb.lint import healthy_logs, healthy_problems

    kb = load_kb(write_kb(tmp_path / "kb", [_ib_entry("strong")]))
    problems = healthy_problems(kb, healthy_logs(_healthy(tmp_path)))
    expected = (
        "ib-missing-entry: strong fingerprint 'NET/IB : No device found' matches healthy log nccl-socket-start.log line 2 "
        "(a line healthy runs print is at most supporting)"
    )
    assert problems == [expected]


def test_a_supporting_fingerprint_on_a_healthy_line_passes(tmp_path):
    from kb.lint import healthy_logs, healthy_problems

    kb = load_kb(write_kb(tmp_path / "kb", [_ib_entry("supporting")]))
    assert healthy_problems(kb, healthy_logs(_healthy(tmp_path))) == []


def test_a_healthy_line_strong_only_beside_a_failure_line_passes(tmp_path):
    from kb.lint import healthy_logs, healthy_problems

    gated = _ib_entry("strong") | {"requires": [r"Watchdog caught collective operation timeout"]}
    kb = load_kb(write_kb(tmp_path / "kb", [gated | {"samples": ["first sample NET/IB : No device found Watchdog caught collective operation timeout", "x"]}]))
    assert healthy_problems(kb, healthy_logs(_healthy(tmp_path))) == []
    excluded = _ib_entry("strong") | {"excludes": [r"Init COMPLETE|NET/IB"]}
    kb = load_kb(write_kb(tmp_path / "kb2", [excluded]))
    assert healthy_problems(kb, healthy_logs(_healthy(tmp_path))) == []


def test_benign_entries_may_match_healthy_lines(tmp_path):
    from kb.lint import healthy_logs, healthy_problems

    benign = _ib_entry("strong") | {"kind": "benign", "when_it_matters": ["When the cluster has InfiniBand."]}
    kb = load_kb(write_kb(tmp_path / "kb", [benign]))
    assert healthy_problems(kb, healthy_logs(_healthy(tmp_path))) == []


def test_the_healthy_corpus_beside_a_kb_is_used(tmp_path):
    from kb.lint import healthy_dir_for, hygiene_problems

    entries = write_kb(tmp_path / "entries", [_ib_entry("strong")])
    healthy = _healthy(tmp_path)
    assert healthy_dir_for(entries) == healthy
    assert len(hygiene_problems(load_kb(entries), healthy_dir_for(entries))) == 1


SHARED = "Watchdog timed out after 600 seconds"


def _pair(**b_overrides):
    a = entry_dict("a-entry", fingerprints=[{"pattern": SHARED, "strength": "strong"}], samples=[f"{SHARED} on rank 3", f"{SHARED} again"])
    b = entry_dict("b-entry", samples=[f"saving shard 2\n{SHARED}", "other text"], **b_overrides)
    return a, b


def test_a_strong_fingerprint_matching_another_entrys_sample_fails(tmp_path):
    from kb.lint import cross_entry_problems

    problems = cross_entry_problems(load_kb(write_kb(tmp_path, list(_pair()))))
    assert len(problems) == 1 and problems[0].startswith(f"a-entry: strong fingerprint '{SHARED}' matches sample 1 of b-entry")


def test_collateral_or_a_gate_separates_the_two(tmp_path):
    from kb.lint import cross_entry_problems

    a, b = _pair()
    assert cross_entry_problems(load_kb(write_kb(tmp_path / "1", [a, b | {"collateral": True}]))) == []
    assert cross_entry_problems(load_kb(write_kb(tmp_path / "2", [a | {"collateral": True}, b]))) == []
    assert cross_entry_problems(load_kb(write_kb(tmp_path / "3", [a | {"excludes": ["saving shard"]}, b]))) == []
    assert cross_entry_problems(load_kb(write_kb(tmp_path / "4", [a | {"requires": ["on rank \\d|again"]}, b]))) == []
    # a gate that does not separate them on that sample still fails
    assert len(cross_entry_problems(load_kb(write_kb(tmp_path / "5", [a | {"excludes": ["never printed"]}, b])))) == 1


def test_kb_lint_hygiene_prints_only_these_problems(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from bot.cli import app

    a, b = _pair()
    entries = write_kb(tmp_path / "entries", [a, b, _ib_entry("strong")])
    _healthy(tmp_path)
    monkeypatch.setenv("TRAINDOC_KB_DIR", str(entries))
    result = CliRunner().invoke(app, ["kb", "lint", "--hygiene"])
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 2 and lines[0].startswith("ib-missing-entry: strong fingerprint") and lines[1].startswith("a-entry: strong")
    assert "2 fingerprint hygiene problems" in result.stderr
