import pytest
from pydantic import ValidationError

from kb.load import KBLoadError, load_kb
from kb.schema import Entry
from tests.fakes.kbfactory import entry_dict, write_kb


def test_a_complete_entry_validates():
    entry = Entry.model_validate(entry_dict("some-failure"))
    assert entry.id == "some-failure"
    assert entry.fingerprints == ()


@pytest.mark.parametrize(
    "change",
    [
        {"unknown_key": 1},
        {"id": "Not_Kebab"},
        {"category": "astrology"},
        {"samples": ["only one"]},
        {"questions": []},
        {"references": []},
        {"references": [{"title": "x y z", "url": "ftp://nope"}]},
        {"fingerprints": [{"pattern": "abcd", "strength": "maybe"}]},
        {"siblings": ["Bad Id"]},
        {"fix": ["   "]},
    ],
)
def test_schema_rejects(change):
    with pytest.raises(ValidationError):
        Entry.model_validate(entry_dict("some-failure", **change))


def test_entries_are_frozen():
    entry = Entry.model_validate(entry_dict("some-failure"))
    with pytest.raises(ValidationError):
        entry.title = "changed"


def test_loader_checks_file_stem_and_folder(tmp_path):
    write_kb(tmp_path, [entry_dict("a-entry")])
    (tmp_path / "communication" / "a-entry.yaml").rename(tmp_path / "communication" / "other-name.yaml")
    with pytest.raises(KBLoadError) as info:
        load_kb(tmp_path)
    assert "differs from the file stem" in str(info.value)


def test_loader_reports_yaml_errors_with_the_file(tmp_path):
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "broken.yaml").write_text("id: broken\n  - : [\n")
    with pytest.raises(KBLoadError) as info:
        load_kb(tmp_path)
    assert "broken.yaml" in info.value.problems[0]


def test_digest_changes_with_any_entry(tmp_path):
    write_kb(tmp_path, [entry_dict("a-entry"), entry_dict("b-entry")])
    before = load_kb(tmp_path).digest
    path = tmp_path / "communication" / "b-entry.yaml"
    path.write_text(path.read_text().replace("Summary of", "A changed summary of"))
    assert load_kb(tmp_path).digest != before


def test_bundled_kb_loads_and_has_the_seed_entries():
    kb = load_kb()
    ids = set(kb.ids())
    assert {"roce-qp-timeout-during-checkpoint-save", "checkpoint-full-state-dict-gather-timeout"} <= ids
