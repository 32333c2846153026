"""User-facing errors: the CLI prints their message as one line and exits non-zero."""


class PaperTalkError(Exception):
    """An error whose message is meant for the user (no traceback)."""

    exit_code = 2


class CorpusError(PaperTalkError):
    """An input file that cannot be used at all (missing, unreadable, wrong format)."""


class StoreError(PaperTalkError):
    """The store is missing, unreachable, or was built with other settings."""
