"""Counts of what an extraction read, extracted and skipped.

Every file the walk reaches after the ignore rules is counted once in
``files_seen`` and then in exactly one of ``files_extracted`` or a
``skipped_*`` file counter, so::

    files_seen == files_extracted + skipped_unsupported + skipped_binary
                  + skipped_too_large + skipped_unreadable + skipped_undecodable

Entries pruned before that (ignored, excluded, vendored, symlinks, unreadable
directories, a git revision's submodules) are counted separately and are not part of
``files_seen``; a pruned directory counts once and its contents are never read. Test
files that ``no_tests`` leaves out are read only to count them and their functions
(``tests``, ``test_functions_left_out``), and are not part of ``files_seen`` either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ExtractStats", "LeftOut"]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


@dataclass
class LeftOut:
    """Entries left out for one reason the caller chose (excludes, tests)."""

    #: Files and directories (a directory counts once; its contents are not read).
    entries: int = 0
    #: Of them, directories.
    dirs: int = 0
    #: Of them, files in a selected language.
    code: int = 0

    def add(self, is_dir: bool, code: bool) -> None:
        """Count one entry."""
        self.entries += 1
        self.dirs += is_dir
        self.code += code

    def describe(self) -> str:
        """``3 files in a supported language and 1 directory``."""
        parts = []
        if self.code or not self.dirs:
            parts.append(f"{_count(self.code, 'file', 'files')} in a supported language")
        if self.dirs:
            parts.append(_count(self.dirs, "directory", "directories"))
        return " and ".join(parts)


@dataclass
class ExtractStats:
    """Mutable counters filled in while ``iter_functions`` runs."""

    #: Files considered (after ignore rules), whatever became of them.
    files_seen: int = 0
    #: Files read and parsed (even when they define no function).
    files_extracted: int = 0
    #: Of them, files with at least one function.
    files_with_functions: int = 0
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
    #: Files and directories matched by ``.gitignore``/``.ignore`` (or git's exclude).
    skipped_ignored: int = 0
    #: Files and directories matched by the caller's ``excludes``.
    excluded: LeftOut = field(default_factory=LeftOut)
    #: Test files left out (``no_tests``; ``riido_pg.extract.paths``).
    tests: LeftOut = field(default_factory=LeftOut)
    #: The functions in them.
    test_functions_left_out: int = 0
    #: Of ``functions``, those in a test path.
    test_functions: int = 0
    #: Of ``functions``, test functions outside test paths (in a test module or with
    #: a test attribute: :func:`riido_pg.fields.is_test_document`).
    inline_tests: int = 0
    #: Such functions ``no_tests`` left out.
    inline_tests_left_out: int = 0
    #: Vendored or generated directories and minified files.
    skipped_vendored: int = 0
    #: Symbolic links (never followed).
    skipped_symlinks: int = 0
    #: Directories that could not be listed.
    dirs_unreadable: int = 0
    #: Submodules of a git revision (gitlinks), which are not read.
    skipped_submodules: int = 0
    #: Functions dropped because their id would exceed the loader's id limit.
    skipped_long_ids: int = 0
    #: Functions left out because they are nested more than 200 functions and named
    #: blocks deep (see ``riido_pg.extract.functions``).
    skipped_too_deep: int = 0
    #: Functions left out of a load because PostgreSQL could not index them (a word
    #: over 2,047 bytes, as in generated or minified code); ``load DIR`` only.
    skipped_unindexable: int = 0
    #: Their ids, in the order they were left out.
    unindexable_ids: list[str] = field(default_factory=list)
    #: (relative path, reason) for each binary, too large, unreadable or
    #: undecodable file, unreadable directory, bad ignore pattern and long id, and
    #: each file with functions nested too deeply.
    problems: list[tuple[str, str]] = field(default_factory=list)

    def problem(self, path: str, reason: str) -> None:
        """Record one per-file problem."""
        self.problems.append((path, reason))

    def describe(self) -> str:
        """One line: the functions, the files they are in and the files read, then what
        was skipped by reason, e.g. ``4 functions in 2 of the 3 files read; skipped: 2
        files in other languages, 1 binary file``."""
        parts = [
            (self.skipped_unsupported, ("file in another language", "files in other languages")),
            (self.skipped_binary, ("binary file", "binary files")),
            (self.skipped_too_large, ("file too large", "files too large")),
            (self.skipped_unreadable, ("unreadable file", "unreadable files")),
            (self.skipped_undecodable, ("file not utf-8", "files not utf-8")),
            (self.skipped_ignored, "ignored"),
            (self.excluded.entries, "excluded"),
            (self.skipped_vendored, "vendored"),
            (self.skipped_symlinks, ("symlink", "symlinks")),
            (self.dirs_unreadable, ("unreadable directory", "unreadable directories")),
            (self.skipped_submodules, ("submodule not read", "submodules not read")),
            (self.skipped_long_ids, ("id too long", "ids too long")),
            (self.skipped_too_deep, ("function nested too deeply", "functions nested too deeply")),
            (
                self.skipped_unindexable,
                ("function with words too long to index", "functions with words too long to index"),
            ),
        ]
        skipped = ", ".join(
            f"{count} {label if isinstance(label, str) else label[count != 1]}"
            for count, label in parts
            if count
        )
        found = _count(self.functions, "function", "functions")
        read = self.files_extracted
        if read == 0:
            line = f"{found}, no file read"
        elif self.files_with_functions in (0, read):
            line = f"{found} in the {_count(read, 'file', 'files')} read"
        else:
            line = f"{found} in {self.files_with_functions} of the {read} files read"
        if skipped:
            line += f"; skipped: {skipped}"
        if self.tests.code:
            left = _count(self.test_functions_left_out, "function", "functions")
            line += f"; --no-tests left out {_count(self.tests.code, 'file', 'files')} ({left})"
        if self.inline_tests_left_out:
            inline = _count(self.inline_tests_left_out, "test", "tests")
            line += ("; --no-tests left out " if not self.tests.code else " and ") + (
                f"{inline} in other files"
            )
        return line

    def no_functions(self, root: object) -> str:
        """Why ``root`` gave no function, in one line: what the caller left out when
        that was every file in a supported language, else what was found."""
        found = self.describe()
        if self.functions and self.skipped_unindexable >= self.functions:
            shown = ", ".join(self.unindexable_ids[:3])
            more = len(self.unindexable_ids) - 3
            shown += f" and {more} more" if more > 0 else ""
            return (
                f"{root}: nothing to load: every function found has a word too long to "
                f"index ({shown}): {found}"
            )
        if self.files_extracted:
            return f"{root}: no functions: {found}"
        reasons = []
        if self.excluded.code or self.excluded.dirs:
            reasons.append(f"the exclude patterns matched {self.excluded.describe()}")
        if self.tests.code or self.tests.dirs:
            reasons.append(f"left out as tests: {self.tests.describe()}")
        if reasons:
            return f"{root}: no functions: {'; '.join(reasons)}: {found}"
        return f"{root}: no functions in a supported language: {found}"
