"""The errors a user can act on (a base-layer module: it imports nothing from stylebench).

A :class:`UserError` means the user can fix it: a bad flag, a bad or missing file, a missing
extra or tool, a busy run folder, a bad dialogue set, a bad model argument. Its message is the
whole story and names the flag or file; the CLI prints it as one line
``stylebench: error: <message>`` and exits 2. Any other exception is a bug: the CLI prints
``stylebench: internal error: <one line>``, writes the traceback to a log file it names and
exits 1 (see :mod:`stylebench.cli`).

``UserError`` itself derives from :class:`Exception` only, so marking an existing error as a user
error (``class RunFolderBusy(UserError, RuntimeError)``) never makes an ``except ValueError``
catch it. The members below that replace a builtin also derive from that builtin, so callers and
tests that catch ``ValueError``, ``FileNotFoundError``, ``KeyError`` or ``ImportError`` still do.
"""

from __future__ import annotations


class UserError(Exception):
    """An error the user can act on; the message names the flag or file."""


class BadValue(UserError, ValueError):
    """A bad flag value, setting, argument, or file content."""


class MissingFile(UserError, FileNotFoundError):
    """A file or folder the user named does not exist."""


class FileClash(UserError, FileExistsError):
    """A file or folder the user named is already there (or is a file where a folder goes)."""


class UnknownName(UserError, KeyError):
    """An unknown model, synthesiser, judge... name (the message lists the known ones)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class MissingExtra(UserError, ImportError):
    """An optional dependency or tool is not installed; the message says what to install."""
