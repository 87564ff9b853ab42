from kb.lint import static_problems
from kb.load import load_kb
from tests.kbfactory import entry_dict, write_kb


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
