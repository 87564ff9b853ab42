"""The action and block ids the Block Kit renderers emit and the Slack handlers register.

Buttons that repeat in one message get a numeric suffix (`show_entry_0`, `show_entry_1`, ...).
"""

from __future__ import annotations

import re

ACTION_HELPFUL = "feedback_helpful"
ACTION_WRONG = "feedback_wrong"
ACTION_WHY = "why_this_match"
ACTION_SIBLINGS = "show_siblings"
ACTION_SHOW_ENTRY = "show_entry"  # + "_<n>"; value: the entry id
ACTION_SHARE = "share_in_channel"
FEEDBACK_MODAL = "feedback_modal"  # callback_id of the 👎 modal
BLOCK_PICK = "pick_entry"
BLOCK_TYPED = "typed_entry"
BLOCK_SEARCH = "search_entry_block"
ACTION_SEARCH_ENTRY = "search_entry"  # external select over every entry (block_suggestion)

SHOW_ENTRY_PATTERN = re.compile(rf"^{ACTION_SHOW_ENTRY}(_\d+)?$")
