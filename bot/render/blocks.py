"""Everything Block Kit, in one import for the Slack handlers (`from bot.render import blocks as
render`): the primitives (bot.render.blockkit), the answer (bot.render.answer), entries
(bot.render.entries), the other views (bot.render.slack_views) and the action ids
(bot.render.action_ids)."""

from __future__ import annotations

from bot.render.action_ids import (
    ACTION_HELPFUL,
    ACTION_SEARCH_ENTRY,
    ACTION_SHARE,
    ACTION_SIBLINGS,
    ACTION_WHY,
    ACTION_WRONG,
    BLOCK_PICK,
    BLOCK_SEARCH,
    BLOCK_TYPED,
    FEEDBACK_MODAL,
    SHOW_ENTRY_PATTERN,
)
from bot.render.answer import render_diagnosis
from bot.render.blockkit import Message, context, escape, section
from bot.render.entries import (
    render_entry,
    render_siblings,
    render_why,
    strip_interactive,
    with_share_button,
)
from bot.render.slack_views import (
    RecentDiagnosis,
    render_entry_options,
    render_error,
    render_feedback_modal,
    render_help,
    render_home,
    render_placeholder,
)

__all__ = [
    "ACTION_HELPFUL",
    "ACTION_SEARCH_ENTRY",
    "ACTION_SHARE",
    "ACTION_SIBLINGS",
    "ACTION_WHY",
    "ACTION_WRONG",
    "BLOCK_PICK",
    "BLOCK_SEARCH",
    "BLOCK_TYPED",
    "FEEDBACK_MODAL",
    "SHOW_ENTRY_PATTERN",
    "Message",
    "RecentDiagnosis",
    "context",
    "escape",
    "render_diagnosis",
    "render_entry",
    "render_entry_options",
    "render_error",
    "render_feedback_modal",
    "render_help",
    "render_home",
    "render_placeholder",
    "render_siblings",
    "render_why",
    "section",
    "strip_interactive",
    "with_share_button",
]
