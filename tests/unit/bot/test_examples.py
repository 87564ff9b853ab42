"""The shipped example eval cases parse and name entries that exist."""

from pathlib import Path

from bot.evaluate import load_cases
from kb.load import load_kb

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "eval"


def test_example_cases_load_and_name_bundled_entries():
    cases = load_cases(EXAMPLES)
    assert len(cases) >= 3 and {c.kind for c in cases} == {"log", "question"}
    ids = set(load_kb().ids())
    for case in cases:
        assert case.label == "none" or case.label in ids, case.name
        assert set(case.also) <= ids, case.name
    assert any(c.label == "none" for c in cases)
