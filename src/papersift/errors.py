"""The errors papersift expects, each with the exit code the command line gives it (0 done, 1 failed, 2 usage, 3 skipped)."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED = 0, 1, 2, 3


class PapersiftError(Exception):
    """Something failed for a reason the message states (an upstream, a file, the store).

    The command line prints the message on one line and exits with `exit_code`; anything
    that is not a PapersiftError is a bug and keeps its traceback.
    """

    exit_code = EXIT_FAILED


class UsageError(PapersiftError, ValueError):
    """The input asked for something that cannot be done as asked (a bad option or query)."""

    exit_code = EXIT_USAGE
