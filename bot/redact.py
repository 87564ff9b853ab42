"""Remove secrets (tokens, keys, passwords in URLs) before anything is stored, logged or echoed."""

from __future__ import annotations

import re

MASK = "[REDACTED]"

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # Slack tokens: xoxb-, xoxp-, xoxa-, xoxs-, xoxe-, xapp-
    (re.compile(r"\b(?:xox[abposer]|xapp)-[A-Za-z0-9-]{8,}"), MASK),
    # Hugging Face, OpenAI/Anthropic-style, GitHub, GitLab, AWS access keys, Google API keys
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{16,}"), MASK),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), MASK),
    (re.compile(r"\bwandb_v1_[A-Za-z0-9_]{20,}|\b[0-9a-f]{40}(?=\s*$)", re.MULTILINE), MASK),
    # JWTs
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
    # user:password@ in URLs (postgres://u:p@h, https://u:p@h)
    (re.compile(r"(?<=://)([^/\s:@]+):([^/\s@]+)@"), r"\1:" + MASK + "@"),
    # Authorization headers
    (re.compile(r"(?i)\b(authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1" + MASK),
    # key=value / key: value / "key": "value" / --key value, for secret-looking keys whose name
    # ends in the secret word (SLACK_BOT_TOKEN=, api_key:, --password), not max_tokens or TOKENIZERS_*
    (
        re.compile(
            r"""(?ix)
            ( (?:--)?[A-Z0-9_.-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?) )
            (?![A-Z0-9])
            ( \s*[=:]\s*["']? | ["']\s*:\s*["'] )
            (?!\[REDACTED\])
            ([^\s"',;]{4,})
            """
        ),
        r"\1\2" + MASK,
    ),
    (
        re.compile(r"(?i)(--[a-z0-9-]*(?:password|passwd|secret|token|api-key|access-key)\s+)(?!\[REDACTED\])(\S{4,})"),
        r"\1" + MASK,
    ),
    # PEM private key blocks
    (
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
        MASK,
    ),
)


def redact(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
