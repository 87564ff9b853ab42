"""Scenario tier: slash command, share button, feedback buttons and modal, why/siblings, App Home."""

from __future__ import annotations

import json

from bot.render import blocks as render
from bot.store.base import NONE_OF_THESE
from tests.fakes import logs
from tests.fakes import slack_payloads as p
from tests.fakes.slack_harness import dispatch


def _button(blocks, action_id):
    for block in blocks:
        for element in block.get("elements", []):
            if element.get("action_id") == action_id:
                return element
    raise AssertionError(f"no {action_id} button")


def _answer_blocks(app, fake_slack, text=logs.SHM_BUS_ERROR):
    dispatch(app, p.event_body(p.mention(text)))
    return fake_slack.wait_calls("chat.update")[0].args["blocks"]


def test_slash_command_answers_ephemerally_and_share_posts_in_channel(make_app, fake_slack):
    app = make_app()
    url = fake_slack.response_url("cmd")
    response = dispatch(app, p.slash_command(logs.HOST_OOM, response_url=url), form=True)
    assert response.status == 200
    answer = fake_slack.wait_calls("response_url")[0].args
    assert answer["response_type"] == "ephemeral"
    assert logs.OOM_ENTRY in str(answer["blocks"])
    share = _button(answer["blocks"], render.ACTION_SHARE)
    dispatch(
        app,
        p.block_action(render.ACTION_SHARE, share["value"], response_url=url, container="message_attachment"),
        form=True,
    )
    posted = fake_slack.wait_calls("chat.postMessage")[0].args
    assert posted["channel"] == p.CHANNEL
    assert logs.OOM_ENTRY in str(posted["blocks"]) and "Shared by" in str(posted["blocks"])
    fake_slack.wait_for(lambda: any(c.args.get("delete_original") for c in fake_slack.calls_to("response_url")))


def test_slash_command_with_entry_id_shows_the_entry(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.slash_command(logs.SHM_ENTRY, response_url=fake_slack.response_url()), form=True)
    answer = fake_slack.wait_calls("response_url")[0].args
    assert answer["blocks"][0]["type"] == "header"
    assert f"`{logs.SHM_ENTRY}`" in str(answer["blocks"][1])


def test_empty_slash_command_shows_help(make_app, fake_slack):
    app = make_app()
    dispatch(app, p.slash_command("", response_url=fake_slack.response_url()), form=True)
    assert "How to use" in str(fake_slack.wait_calls("response_url")[0].args["blocks"])


def test_helpful_button_stores_feedback(make_app, fake_slack, store):
    app = make_app()
    blocks = _answer_blocks(app, fake_slack)
    value = _button(blocks, render.ACTION_HELPFUL)["value"]
    dispatch(app, p.block_action(render.ACTION_HELPFUL, value, response_url=fake_slack.response_url()), form=True)
    fake_slack.wait_calls("response_url")
    [feedback] = store.list_feedback()
    assert feedback.helpful and feedback.predicted_id == logs.SHM_ENTRY and feedback.user == p.USER


def test_wrong_button_opens_modal_and_submission_stores_feedback(make_app, fake_slack, store):
    app = make_app()
    blocks = _answer_blocks(app, fake_slack)
    value = _button(blocks, render.ACTION_WRONG)["value"]
    dispatch(app, p.block_action(render.ACTION_WRONG, value, response_url=fake_slack.response_url()), form=True)
    view = fake_slack.wait_calls("views.open")[0].args["view"]
    assert view["callback_id"] == render.FEEDBACK_MODAL
    options = view["blocks"][1]["element"]["options"]
    assert options[0]["value"] == logs.SHM_ENTRY and len(options) <= 6 and options[-1]["value"] == NONE_OF_THESE
    picked = options[1]["value"]
    values = {
        render.BLOCK_PICK: {"value": {"type": "static_select", "selected_option": options[1]}},
        render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": None}},
    }
    response = dispatch(app, p.view_submission(render.FEEDBACK_MODAL, values, view["private_metadata"]), form=True)
    assert response.status == 200 and not response.body
    [feedback] = store.list_feedback()
    assert not feedback.helpful and feedback.correct_id == picked and feedback.predicted_id == logs.SHM_ENTRY
    assert feedback.channel == p.CHANNEL and feedback.diagnosis_id


def test_modal_search_none_of_these_and_typed_words(make_app, fake_slack, store, fake_engine):
    app = make_app()
    suggestion = p.block_suggestion(render.ACTION_SEARCH_ENTRY, render.BLOCK_SEARCH, "shm", callback_id=render.FEEDBACK_MODAL)
    response = dispatch(app, suggestion, form=True)
    found = [o["value"] for o in json.loads(response.body)["options"]]
    assert logs.SHM_ENTRY in found and all("shm" in f"{e.id} {e.title} {e.tags}".lower() for e in map(fake_engine.entry, found))
    searched = {render.BLOCK_SEARCH: {render.ACTION_SEARCH_ENTRY: {"type": "external_select", "selected_option": {"value": logs.OOM_ENTRY}}}}
    dispatch(app, p.view_submission(render.FEEDBACK_MODAL, searched, "{}"), form=True)
    none = {
        render.BLOCK_PICK: {"value": {"type": "static_select", "selected_option": {"value": NONE_OF_THESE}}},
        render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "our NFS quota, password=hunter2xyz"}},
    }
    dispatch(app, p.view_submission(render.FEEDBACK_MODAL, none, "{}"), form=True)
    typed_only = {render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "it was the scheduler"}}}
    dispatch(app, p.view_submission(render.FEEDBACK_MODAL, typed_only, "{}"), form=True)
    newest_first = store.list_feedback()
    assert [f.correct_id for f in reversed(newest_first)] == [logs.OOM_ENTRY, NONE_OF_THESE, NONE_OF_THESE]
    assert "hunter2xyz" not in newest_first[1].note and newest_first[1].note.startswith("our NFS quota")
    assert newest_first[0].note == "it was the scheduler"


def test_modal_without_a_choice_asks_again(make_app, fake_slack, store):
    app = make_app()
    values = {render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "  "}}}
    response = dispatch(app, p.view_submission(render.FEEDBACK_MODAL, values, "{}"), form=True)
    assert json.loads(response.body)["response_action"] == "errors"
    assert store.list_feedback() == []


def test_typed_free_text_feedback_is_redacted(make_app, fake_slack, store):
    app = make_app()
    values = {render.BLOCK_TYPED: {"value": {"type": "plain_text_input", "value": "it was my token=supersecret99"}}}
    dispatch(app, p.view_submission(render.FEEDBACK_MODAL, values, "{}"), form=True)
    [feedback] = store.list_feedback()
    assert feedback.correct_id == NONE_OF_THESE and "supersecret99" not in feedback.note


def test_why_this_match_explains_from_the_stored_answer(make_app, fake_slack):
    app = make_app()
    blocks = _answer_blocks(app, fake_slack)
    value = _button(blocks, render.ACTION_WHY)["value"]
    dispatch(app, p.block_action(render.ACTION_WHY, value, response_url=fake_slack.response_url()), form=True)
    why = fake_slack.wait_calls("response_url")[0].args
    assert why["response_type"] == "ephemeral" and "Bus error" in str(why["blocks"])


def test_show_siblings_and_show_entry(make_app, fake_slack, fake_engine):
    app = make_app()
    entry = fake_engine.entry(logs.SHM_ENTRY)
    dispatch(app, p.block_action(render.ACTION_SIBLINGS, entry.id, response_url=fake_slack.response_url()), form=True)
    siblings = fake_slack.wait_calls("response_url")[0].args
    known = [s for s in entry.siblings if fake_engine.entry(s)]
    assert all(s in str(siblings) for s in known)
    dispatch(app, p.block_action("show_entry_2", logs.OOM_ENTRY, response_url=fake_slack.response_url()), form=True)
    shown = fake_slack.wait_calls("response_url", 2)[1].args
    assert logs.OOM_ENTRY in str(shown["blocks"])


def test_app_home_shows_usage_kb_size_and_recent(make_app, fake_slack, fake_engine):
    app = make_app()
    _answer_blocks(app, fake_slack)
    dispatch(app, p.event_body({"type": "app_home_opened", "user": p.USER, "channel": "D1", "tab": "home"}))
    view = fake_slack.wait_calls("views.publish")[0].args["view"]
    text = str(view["blocks"])
    assert f"{len(fake_engine.entries())} entries" in text
    assert "Recent diagnoses in this workspace" in text and "DataLoader" in text


def test_share_where_the_bot_is_not_a_member_explains_how_to_invite(make_app, fake_slack):
    app = make_app()
    fake_slack.script("chat.postMessage", body={"ok": False, "error": "not_in_channel"})
    url = fake_slack.response_url("share")
    value = json.dumps({"entry": logs.SHM_ENTRY})
    dispatch(
        app, p.block_action(render.ACTION_SHARE, value, response_url=url, container="message_attachment"), form=True
    )
    notice = fake_slack.wait_calls("response_url")[0].args
    assert "/invite @traindoc" in notice["text"] and not notice.get("delete_original")
