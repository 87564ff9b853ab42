"""traindoc's exception tree: every error traindoc raises on purpose is one of these.

It lives in the lowest package (imports run kb -> index -> bot), so every layer raises from it.

    TraindocError                 the root; `exit_code` is what the CLI exits with
    +-- InputError                input the user can fix (exit 2); the message is safe to show
    |   +-- IngestError           nothing to diagnose: empty, binary, corrupt gzip
    |   +-- FileDownloadError     a Slack attachment could not be fetched as text
    |   +-- EvalCaseError         an eval case file without text, kind and label
    +-- SetupError                the installation or configuration is wrong (exit 1)
        +-- ConfigError           the environment lacks what `serve` needs
        +-- KBLoadError           entry files that do not load or validate
        +-- PatternError          a regex the linear-time engine refuses
        +-- IndexFormatError      an unreadable or incompatible index directory
        +-- ModelNotFoundError    no local embedding model (or encoder) to use
        |   +-- TorchMissingError torch or sentence-transformers is needed and missing
        +-- EncoderDisagreementError  ONNX and sentence-transformers vectors differ

The CLI catches TraindocError once (bot.cli) and the Slack listeners catch InputError once
(bot.slack.messages, bot.slack.commands); anything else is a bug and is logged as one.
"""

from __future__ import annotations

EXIT_INPUT = 2  # what the CLI exits with on bad input (click's usage-error code)
EXIT_SETUP = 1

TORCH_MISSING = (
    "this needs torch and sentence-transformers (to build the index or export the ONNX encoder): "
    "pip install torch==2.13.0 sentence-transformers, or on a machine without a GPU "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu"
)


class TraindocError(Exception):
    """Root of every error traindoc raises on purpose."""

    exit_code = EXIT_SETUP

    def explain(self) -> str:
        """The one message the CLI prints (after `traindoc: `)."""
        return str(self)


class InputError(TraindocError, ValueError):
    """Input the user can fix; its message is safe to show (in a terminal or a Slack thread)."""

    exit_code = EXIT_INPUT


class IngestError(InputError):
    """Input that cannot be diagnosed (empty, binary rather than text, corrupt compression)."""


class FileDownloadError(InputError):
    """A file could not be fetched as text; the message is safe to show in Slack."""


class EvalCaseError(InputError):
    """An eval case file that is not a mapping with text, kind and label."""


class SetupError(TraindocError, RuntimeError):
    """The installation or configuration is wrong; the message says what to change."""

    exit_code = EXIT_SETUP


class ConfigError(SetupError):
    """The environment lacks what the chosen mode needs; the message names every missing
    variable."""


class KBLoadError(SetupError):
    """One or more entry files could not be read or validated."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems

    def explain(self) -> str:
        return f"the knowledge base does not load:\n{self}"


class PatternError(SetupError):
    """A regex the linear-time engine refuses."""


class IndexFormatError(SetupError):
    """The index directory is unreadable or was written by an incompatible version."""


class ModelNotFoundError(SetupError):
    """No local copy of the embedding model could be found (or the encoder it needs is not
    installed)."""


class TorchMissingError(ModelNotFoundError):
    """torch or sentence-transformers is needed here and is not installed."""

    def __init__(self) -> None:
        super().__init__(TORCH_MISSING)


class EncoderDisagreementError(SetupError):
    """The ONNX and sentence-transformers encoders gave different vectors: the index was not
    published."""
