"""Counts of what an extraction read, extracted and skipped.

Every file the walk reaches after the ignore rules is counted once in
``files_seen`` and then in exactly one of ``files_extracted`` or a
``skipped_*`` file counter, so::

    files_seen == files_extracted + skipped_unsupported + skipped_binary
                  + skipped_too_large + skipped_unreadable + skipped_undecodable

Entries pruned before that (ignored, excluded, vendored, symlinks, unreadable
directories) are counted separately and are not part of ``files_seen``; a
pruned directory counts once and its contents are never read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ExtractStats"]


@dataclass
class ExtractStats:
    """Mutable counters filled in while ``iter_functions`` runs."""

    #: Files considered (after ignore rules), whatever became of them.
    files_seen: int = 0
    #: Files read and parsed (even when they define no function).
    files_extracted: int = 0
    #: Documents produced.
    functions: int = 0
    #: Files of no selected language (by extension).
    skipped_unsupported: int = 0
    #: Files with a NUL byte.
    skipped_binary: int = 0
    #: Files larger than ``max_file_bytes``.
    skipped_too_large: int = 0
    #: Files that vanished, could not be opened or read, or are not regular files.
    skipped_unreadable: int = 0
    #: Files whose content or name is not valid UTF-8.
    skipped_undecodable: int = 0
    #: Files and directories matched by ``.gitignore``/``.ignore`` or ``excludes``.
    skipped_ignored: int = 0
    #: Vendored or generated directories and minified files.
    skipped_vendored: int = 0
    #: Symbolic links (never followed).
    skipped_symlinks: int = 0
    #: Directories that could not be listed.
    dirs_unreadable: int = 0
    #: Functions dropped because their id would exceed the loader's id limit.
    skipped_long_ids: int = 0
    #: Functions left out because they are nested more than 200 functions and named
    #: blocks deep (see ``riido_pg.extract.functions``).
    skipped_too_deep: int = 0
    #: Functions left out of a load because PostgreSQL could not index them (a word
    #: over 2,047 bytes, as in generated or minified code); ``load DIR`` only.
    skipped_unindexable: int = 0
    #: (relative path, reason) for each binary, too large, unreadable or
    #: undecodable file, unreadable directory, bad ignore pattern and long id, and
    #: each file with functions nested too deeply.
    problems: list[tuple[str, str]] = field(default_factory=list)

    def problem(self, path: str, reason: str) -> None:
        """Record one per-file problem."""
        self.problems.append((path, reason))

    def describe(self) -> str:
        """One line, e.g. ``0 functions in 3 files (2 unsupported, 1 binary)``."""
        parts = [
            (self.skipped_unsupported, "unsupported"),
            (self.skipped_binary, "binary"),
            (self.skipped_too_large, "too large"),
            (self.skipped_unreadable, "unreadable"),
            (self.skipped_undecodable, "not utf-8"),
            (self.skipped_ignored, "ignored"),
            (self.skipped_vendored, "vendored"),
            (self.skipped_symlinks, "symlinks"),
            (self.dirs_unreadable, "unreadable directories"),
            (self.skipped_long_ids, "ids too long"),
            (self.skipped_too_deep, "functions nested too deeply"),
            (self.skipped_unindexable, "functions with words too long to index"),
        ]
        skipped = ", ".join(f"{count} {label}" for count, label in parts if count)
        noun = "function" if self.functions == 1 else "functions"
        files = "file" if self.files_seen == 1 else "files"
        line = f"{self.functions} {noun} in {self.files_seen} {files}"
        return f"{line} ({skipped})" if skipped else line
