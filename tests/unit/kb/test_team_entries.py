"""Team entries (TRAINDOC_KB_EXTRA): merge, collide with a clear error, override; `kb new --from`."""

from __future__ import annotations

import pytest

from bot.settings import Settings
from kb.lint import static_problems
from kb.load import KBLoadError, load_kb
from tests.fakes.kbfactory import entry_dict, write_kb


@pytest.fixture()
def bundled(tmp_path):
    return write_kb(
        tmp_path / "bundled",
        [entry_dict("nccl-thing", siblings=["oom-thing"]), entry_dict("oom-thing", category="memory", samples=["o one", "o two"])],
    )


def test_team_entries_merge_with_the_bundled_ones(tmp_path, bundled):
    team = write_kb(tmp_path / "team", [entry_dict("our-launcher-quirk", category="launch-and-elastic", samples=["q one", "q two"])])
    kb = load_kb(bundled, extra=[team])
    assert kb.ids() == ["nccl-thing", "oom-thing", "our-launcher-quirk"]
    assert kb.file_of("our-launcher-quirk") == team / "launch-and-elastic" / "our-launcher-quirk.yaml"
    assert kb.digest != load_kb(bundled).digest  # a team change makes the index stale


def test_colliding_ids_name_both_files(tmp_path, bundled):
    team = write_kb(tmp_path / "team", [entry_dict("oom-thing", category="memory", samples=["t one", "t two"])])
    with pytest.raises(KBLoadError) as caught:
        load_kb(bundled, extra=[team])
    message = str(caught.value)
    assert "duplicate id oom-thing" in message
    assert str(bundled / "memory" / "oom-thing.yaml") in message and str(team / "memory" / "oom-thing.yaml") in message


def test_override_replaces_the_bundled_entry_and_siblings_follow(tmp_path, bundled):
    team = write_kb(
        tmp_path / "team",
        [entry_dict("our-oom", category="memory", overrides="oom-thing", samples=["ours one", "ours two"])],
    )
    kb = load_kb(bundled, extra=[team])
    assert "oom-thing" not in kb.ids() and "our-oom" in kb.ids()
    assert kb.by_id()["nccl-thing"].siblings == ("our-oom",)
    assert static_problems(kb) == []


def test_override_with_the_same_id(tmp_path, bundled):
    team = write_kb(tmp_path / "team", [entry_dict("oom-thing", category="memory", overrides="oom-thing", title="Our own OOM entry")])
    assert load_kb(bundled, extra=[team]).by_id()["oom-thing"].title == "Our own OOM entry"


def test_override_of_an_unknown_id_is_an_error(tmp_path, bundled):
    team = write_kb(tmp_path / "team", [entry_dict("our-oom", category="memory", overrides="no-such-entry")])
    with pytest.raises(KBLoadError, match="not a bundled entry"):
        load_kb(bundled, extra=[team])


def test_settings_split_several_directories(monkeypatch, tmp_path):
    monkeypatch.setenv("TRAINDOC_KB_EXTRA", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    assert Settings().kb_extra == (tmp_path / "a", tmp_path / "b")
    monkeypatch.setenv("TRAINDOC_KB_EXTRA", "")
    assert Settings().kb_extra == ()


def test_lint_refuses_todo_fields(tmp_path):
    kb = load_kb(write_kb(tmp_path, [entry_dict("drafted-entry", fix=["TODO: concrete steps"])]))
    assert static_problems(kb) == ["drafted-entry: fix still says TODO"]


def test_calibration_setting_must_name_a_file(monkeypatch, tmp_path):
    from pydantic import ValidationError

    monkeypatch.setenv("TRAINDOC_CALIBRATION", str(tmp_path / "missing.json"))
    with pytest.raises(ValidationError, match="traindoc calibrate --out"):
        Settings()
    (tmp_path / "fit.json").write_text("{}")
    monkeypatch.setenv("TRAINDOC_CALIBRATION", str(tmp_path / "fit.json"))
    assert Settings().calibration == tmp_path / "fit.json"
