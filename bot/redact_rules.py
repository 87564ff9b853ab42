"""The secret rules bot.redact applies: detect-secrets' plugin patterns plus our own, all
linear-time.

Every pattern is RE2 and Hyperscan syntax (no lookaround, no backreferences) and describes one line.
A rule masks its whole match, or only its value group(s) `(?P<v...>)` where the name around
the value is worth keeping (`password=[REDACTED]`). An optional `check` vetoes a candidate value
that is
plainly not a secret (`eos_token='</s>'`, `max_key=None`); checks run on short matched strings only.
"""

from __future__ import annotations

import importlib
import logging
import math
import pkgutil
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import re2

from kb.patterns import PatternError, compile_linear

MASK = "[REDACTED]"
log = logging.getLogger("traindoc.redact")


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str  # RE2 syntax; named groups v, w, x... mark the value to mask
    # (name text, value) -> mask?
    check: Callable[[str, str], bool] | None = field(default=None, compare=False)
    key_block: bool = False  # a private key's BEGIN line: mask the key's body lines below it too
    prefilter: str | None = None  # a cheaper pattern matching every line the full one matches

    @property
    def scan_pattern(self) -> str:
        """For the multi-pattern scanner: the prefilter, or the pattern with plain groups."""
        return self.prefilter or re.sub(r"\(\?P<\w+>", "(", self.pattern)

    @cached_property
    def _compiled(self) -> tuple[Any, list[int], int | None]:
        regex = compile_linear(self.pattern)
        groups = [i for name, i in regex.groupindex.items() if name.startswith(("v", "w", "x"))]
        return regex, sorted(groups), regex.groupindex.get("name")

    def spans(self, line: str) -> list[tuple[int, int]]:
        regex, groups, name_group = self._compiled
        out = []
        for m in regex.finditer(line):
            start, end = m.span()
            for g in groups:
                if m.start(g) >= 0:
                    start, end = m.span(g)
                    break
            if self.check is not None:
                named = m.group(name_group) if name_group else m.group(0)
                if not self.check(named or "", line[start:end]):
                    continue
            if end > start:
                out.append((start, end))
        return out


# -- value checks ------------------------------------------------------------------------------

_PLACEHOLDERS = {
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "",
    "required",
    "optional",
    "str",
    "string",
}
_STRICT_NAME = re2.compile(
    r"(?i)secret|passw|pwd|credential|token|api[_-]?key|access[_-]?key|private[_-]?key|auth"
)
_DOTTED = re2.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")  # tokenizer.eos_token, self.key


def shannon(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _token_like(value: str) -> bool:
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and shannon(value) >= 3.0
    )


def _not_placeholder(value: str) -> bool:
    v = value.strip()
    low = v.lower()
    if low in _PLACEHOLDERS or v.startswith(
        ("[REDACTED", "$", "<", "%(", "{{", "os.environ", "getenv")
    ):
        return False
    # ****, xxxx, [PAD]
    return not (
        set(v) <= set("*xX.-_") or (v.startswith("[") and v.endswith("]") and v[1:-1].isupper())
    )


def credential_value(name: str, value: str) -> bool:
    """A NAME=value pair: any real value for password/secret/token names; for other *KEY names, only
    a token-like value (cache_key=step_100 is not a secret, a Kaggle key is)."""
    if not _not_placeholder(value):
        return False
    if _DOTTED.fullmatch(value):
        return False
    if _STRICT_NAME.search(name):
        # eos_token=</s>, pad_token=[PAD], unk_token=UNK: short, plain values of *_token names are
        # kept
        return not (name.lower().endswith("token") and not _token_like(value) and len(value) < 12)
    return _token_like(value)


def high_entropy(_name: str, value: str) -> bool:
    return _token_like(value) and len(value) >= 20 and shannon(value) >= 3.5


# -- our rules ---------------------------------------------------------------------------------

_SEP = r"""["']?[ \t]*(?:=>|:=|=|:)[ \t]*"""
_VALUE = (
    r"""(?:[bB]?'(?P<v>[^'\n]{1,256})'|[bB]?"(?P<w>[^"\n]{1,256})"|(?P<x>[^\s'",;}\])]{1,256}))"""
)
_NAME = r"""(?P<name>[A-Za-z0-9_.-]*(?i:key|secret|token|password|passwd|pwd|credentials?))"""

OWN_RULES: tuple[Rule, ...] = (
    Rule("slack-token", r"\b(?:xox[abposer]|xapp)-[A-Za-z0-9-]{8,}"),
    Rule(
        "slack-webhook",
        r"(?i)https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]+",
    ),
    Rule("huggingface-token", r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}"),
    Rule("openai-anthropic-key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    Rule("github-token", r"\bgh[pousr]_[A-Za-z0-9]{30,}"),
    Rule("github-fine-grained-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    Rule("gitlab-token", r"\bgl(?:pat|dt|rt|ft|soat)-[A-Za-z0-9_-]{16,}"),
    Rule("aws-access-key-id", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),
    Rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    Rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    Rule("wandb-key", r"\bwandb_v1_[A-Za-z0-9_]{20,}|\blocal-[0-9a-f]{40}\b"),
    Rule("wandb-login", r"(?i)wandb[^\n]{0,60}?\b(?P<v>[0-9a-f]{40})\b"),
    Rule("ngc-key", r"\bnvapi-[A-Za-z0-9_-]{20,}"),
    Rule("databricks-token", r"\bdapi[0-9a-f]{32}(?:-[0-9]+)?\b"),
    Rule("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}|\bwhsec_[A-Za-z0-9]{20,}"),
    Rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}"),
    Rule("pypi-token", r"\bpypi-[A-Za-z0-9_-]{50,}"),
    Rule("replicate-token", r"\br8_[A-Za-z0-9]{30,}"),
    Rule(
        "azure-account-key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)[ \t]*=[ \t]*(?P<v>[A-Za-z0-9+/=]{16,})",
    ),
    Rule("azure-sas-signature", r"(?i)[?&;]sig=(?P<v>[A-Za-z0-9%+/=]{8,})"),
    Rule(
        "url-password",
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'\"]*:(?P<v>[^\s/'\"]+)@[A-Za-z0-9.\[\]_-]+",
        prefilter=r"://[^\s/:@'\"]*:[^\s/'\"]+@",
    ),
    Rule(
        "authorization-header",
        r"""(?i)authori[sz]ation["']?[ \t]*[:=][ \t]*["']?"""
        r"""(?:bearer|basic|token|digest|bot)[ \t]+(?P<v>[^\s'",;]+)""",
    ),
    Rule("bearer", r"(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{12,})"),
    Rule(
        "name-value",
        _NAME + _SEP + _VALUE,
        check=credential_value,
        # Only the lines the check could accept reach Python: a name with a strict word (any value
        # may be a secret), or another *key name followed by a value long enough to be token-like
        # (cache_key=step_100, a metric on every line of some logs, never leaves the scanner).
        prefilter=(
            r"""(?i)(?:(?:secret|token|passwd|pwd|password|credentials?)["']?[ \t]*[=:]"""
            r"""|(?:secret|passw|pwd|credential|token|auth)[A-Za-z0-9_.-]*key["']?[ \t]*[=:]"""
            r"""|(?:api|access|private)[_-]?key["']?[ \t]*[=:]"""
            r"""|key["']?[ \t]*(?:=>|:=|=|:)[ \t]*"""
            r"""(?:[bB]?'[^'\n]{16}|[bB]?"[^"\n]{16}|[^\s'",;}\])]{16}))"""
        ),
    ),
    Rule(
        "cli-flag",
        r"(?i)(?P<name>--[a-z0-9-]*(?:password|passwd|secret|token|api-key|access-key|"
        r"private-key))[ \t]+(?P<v>[^\s-][^\s]{2,255})",
        check=credential_value,
    ),
    Rule("netrc", r"(?i)\bmachine[ \t]+\S+[^\n]*?\bpassword[ \t]+(?P<v>\S+)"),
    Rule("netrc-line", r"(?i)^[ \t]*password[ \t]+(?P<v>\S+)[ \t]*$"),
    Rule(
        "high-entropy-after-credential-word",
        r"(?i)(?P<name>secret|token|passw(?:or)?d|pwd|credential|key|auth)[A-Za-z0-9_-]{0,20}"
        r"(?:[^A-Za-z0-9\n]{1,4}|[ \t]+(?:is|was|of)[ \t]+)(?P<v>[A-Za-z0-9+/=_-]{20,256})",
        check=high_entropy,
        prefilter=r"(?i)(?:secret|token|passw|pwd|credential|key|auth)[A-Za-z0-9_-]{0,20}"
        r"(?:[^A-Za-z0-9\n]{1,4}|[ \t]+(?:is|was|of)[ \t]+)[A-Za-z0-9+/=_-]{20}",
    ),
    Rule("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----[^\n]*", key_block=True),
    Rule("putty-key", r"PuTTY-User-Key-File-[0-9]+:[^\n]*", key_block=True),
)

_KEY_BODY = re2.compile(
    r"[A-Za-z0-9+/=]{1,100}|(?:Proc-Type|DEK-Info|Comment|Encryption|Public-Lines|Private-Lines|Private-MAC):[^\n]*|"
)


def is_key_body_line(line: str) -> bool:
    """A line of a key's base64 body (or its headers)."""
    return len(line) <= 200 and _KEY_BODY.fullmatch(line.strip()) is not None


# -- detect-secrets' maintained patterns -------------------------------------------------------

# Plugins left out: IP addresses are not secrets in a log; Artifactory's `AP[0-9A-F]...` masks log
# words; BasicAuth is covered (with passwords containing @, and without a user) by url-password.
_SKIPPED_PLUGINS = {"IPPublicDetector", "ArtifactoryDetector", "BasicAuthDetector"}


def _translate(pattern: str, ignore_case: bool) -> str:
    """detect-secrets targets Python `re`: drop its word-boundary lookarounds (a wider match
    only masks more) and keep matches on one line."""
    p = pattern.replace("(?:(?<=\\W)|(?<=^))", "").replace("(?!\\w)", "")
    p = p.replace("\\s", "[ \\t]")
    return ("(?i)" if ignore_case else "") + p


def detect_secrets_rules() -> tuple[Rule, ...]:
    try:
        from detect_secrets import plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - a declared dependency; our own rules still apply
        log.warning("detect-secrets is not installed: redacting with traindoc's own rules only")
        return ()
    rules = []
    for info in pkgutil.iter_modules(plugins.__path__):
        module = importlib.import_module(f"{plugins.__name__}.{info.name}")
        for name, obj in sorted(vars(module).items()):
            if (
                not (isinstance(obj, type) and issubclass(obj, RegexBasedDetector))
                or obj is RegexBasedDetector
            ):
                continue
            if name in _SKIPPED_PLUGINS or obj.__module__ != module.__name__:
                continue
            for i, regex in enumerate(obj().denylist):
                if regex.flags & re.VERBOSE:
                    continue
                pattern = _translate(regex.pattern, bool(regex.flags & re.IGNORECASE))
                # whole-match masks: no capture needed
                pattern = re.sub(r"(?<!\\)\((?!\?)", "(?:", pattern)
                try:
                    compile_linear(pattern)
                except PatternError:
                    continue  # lookaround or backreferences the linear engines refuse
                rules.append(
                    Rule(
                        f"detect-secrets:{name}:{i}",
                        pattern,
                        key_block=name == "PrivateKeyDetector",
                    )
                )
    return tuple(rules)


def all_rules() -> tuple[Rule, ...]:
    """Our rules and detect-secrets' (checked by the caller's scanner; see `usable_rules`)."""
    return OWN_RULES + detect_secrets_rules()


def usable_rules(rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
    """The rules Hyperscan accepts, one compile each: only needed when compiling all at once
    failed (a new detect-secrets release), so the common start-up pays one cached load instead."""
    from index.scanner import hyperscan_rejects

    usable = []
    for rule in rules:
        why = hyperscan_rejects(rule.scan_pattern)
        if why is not None:
            log.warning("redaction rule %s left out: Hyperscan refuses it (%s)", rule.name, why)
            continue
        usable.append(rule)
    return tuple(usable)
