"""The error of a result folder or of a file in it (below every reader and writer)."""

from __future__ import annotations

__all__ = ["FolderError"]


class FolderError(ValueError):
    """The folder cannot hold this run, or a file in it cannot be used (not
    writable, another run's results, a malformed or unsafe record, ...)."""
