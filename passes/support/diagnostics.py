"""Source locations and clang-style diagnostics.

``file:line:col: error: message`` followed by the source line and a caret, as
clang, LLVM and xDSL print them.  Every stage reports user errors through a
``DiagnosticSink``; the driver renders them and turns errors into exit status 1.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import NamedTuple


class SourceLoc(NamedTuple):
    """Where in which source a diagnostic points (a tuple: one is made per AST node)."""
    file: str
    line: int
    col: int
    length: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(slots=True)
class Diagnostic:
    severity: str              # "error" | "warning" | "note"
    loc: SourceLoc | None
    message: str
    notes: list["Diagnostic"] = field(default_factory=list)

    def render(self, sources: dict[str, str] | None = None) -> str:
        head = f"{self.loc}: " if self.loc else "minisycl: "
        out = [printable(f"{head}{self.severity}: {self.message}")]
        if self.loc and sources and self.loc.file in sources:
            text = source_line(sources[self.loc.file], self.loc.line)
            if text is not None:
                text = text.expandtabs(1)
                start = max(self.loc.col - 1, 0)
                width = max(1, min(self.loc.length, max(len(text) - start, 1), SHOWN_COLUMNS // 2))
                text, start = _window(text, start)
                shown = printable(text[:start])
                underlined = printable(text[start:start + width]) or " "
                out.append(shown + printable(text[start:]))
                out.append(" " * len(shown) + "^" + "~" * (len(underlined) - 1))
        for note in self.notes:
            out.append(note.render(sources))
        return "\n".join(out)


def source_line(source: str, line: int) -> str | None:
    """Line ``line`` (1-based) of ``source`` as the lexers count lines (ended by
    ``\n`` only; a CRLF's ``\r`` dropped), or None past the end.  Not
    ``str.splitlines``: it also splits at ``\r``, form feeds and U+2028, so the
    line shown would not be the line the location names."""
    if line < 1:
        return None
    start = 0
    for _ in range(line - 1):
        start = source.find("\n", start) + 1
        if start == 0:
            return None
    end = source.find("\n", start)
    text = source[start:] if end < 0 else source[start:end]
    if end < 0 and not text and start == len(source) and line > 1:
        return None
    return text[:-1] if text.endswith("\r") else text


def printable(text: str) -> str:
    """``text`` safe to write to a terminal, as clang shows source lines:
    control and other invisible characters (escape sequences, ``\r``, bidi
    overrides, line separators) as ``<U+XXXX>``, an undecodable byte (a lone
    surrogate from ``surrogateescape``) as ``<XX>``."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def printable_lines(text: str) -> str:
    """``printable`` for each line of ``text`` (its line breaks kept)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def _escaped(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"<{code - 0xDC00:02X}>"
    if ch == " " or unicodedata.category(ch) == "Zs":
        return ch
    return f"<U+{code:04X}>"


#: A source line longer than this is shown as the part of it around the caret.
SHOWN_COLUMNS = 120


def source_line(text: str, line: int) -> str | None:
    """Line ``line`` (1-based) of ``text`` without its line end, or None past
    the end.  Lines end at ``\\n`` as the lexers count them (a ``\\r`` before
    it is dropped).  Found by counting line ends a block at a time, not by
    splitting the whole source: a diagnostic on a 50 MB file costs a scan, not
    a list of its lines."""
    if line < 1:
        return None
    start, todo, n = 0, line - 1, len(text)
    while todo:
        block = text.count("\n", start, start + _BLOCK)
        if block >= todo or start + _BLOCK >= n:
            break
        todo -= block
        start += _BLOCK
    for _ in range(todo):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    if start >= n and line > 1:
        return None
    end = text.find("\n", start)
    shown = text[start:] if end == -1 else text[start:end]
    return shown[:-1] if shown.endswith("\r") else shown


#: how much ``source_line`` counts at once before it looks for single line ends
_BLOCK = 1 << 16


def _window(text: str, caret: int) -> tuple[str, int]:
    """``text`` cut to about ``SHOWN_COLUMNS`` around ``caret`` (``...`` where
    cut), and the caret's column in what is shown."""
    if len(text) <= SHOWN_COLUMNS:
        return text, caret
    left = min(max(caret - SHOWN_COLUMNS // 2, 0), len(text) - SHOWN_COLUMNS)
    right = left + SHOWN_COLUMNS
    shown = ("..." if left else "") + text[left:right] + ("..." if right < len(text) else "")
    return shown, caret - left + (3 if left else 0)


def too_deep(name: str) -> str:
    """The error for a declaration nested deeper than the checker and emitter,
    which recurse once per level, can follow (clang has such limits too)."""
    return f"'{name}' nests expressions or statements too deeply to compile"


class NestingTooDeep(Exception):
    """A function body the emitter could not walk: ``too_deep`` at ``loc``."""

    def __init__(self, loc: SourceLoc, function: str):
        super().__init__(too_deep(function))
        self.loc = loc


class UserError(Exception):
    """A bad input that is not source code (IR, a pipeline, a bundle...): the CLI
    prints ``render()``, by default ``minisycl: error: <message>``, and exits
    with status 1."""

    def render(self) -> str:
        return printable_lines(f"minisycl: error: {self}")


class CompileError(Exception):
    """Raised when a stage finished with errors; carries its diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic], sources: dict[str, str] | None = None,
                 error_count: int | None = None):
        self.diagnostics = diagnostics
        self.sources = sources or {}
        #: every error found, also those past the limit that were not kept
        self.error_count = error_count if error_count is not None else \
            sum(1 for d in diagnostics if d.severity == "error")
        super().__init__(self.render())

    def render(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.diagnostics)

    def summary(self) -> str:
        """The closing line, as clang writes it."""
        n = self.error_count
        return f"{n} error{'s' if n != 1 else ''} generated."


#: Warnings kept per compilation: bounded like errors, so that a source repeating
#: one warned construct a million times costs neither a million objects nor lines.
MAX_WARNINGS = 1000


class DiagnosticSink:
    """Collects diagnostics of one compilation, in the order they were found."""

    def __init__(self, sources: dict[str, str] | None = None, max_errors: int = 50):
        self.diagnostics: list[Diagnostic] = []
        self.sources = sources if sources is not None else {}
        self.max_errors = max_errors
        self.error_count = 0
        self.warning_count = 0

    def error(self, loc: SourceLoc | None, message: str, notes: list[Diagnostic] | None = None) -> None:
        self.error_count += 1
        if self.error_count <= self.max_errors:
            self.diagnostics.append(Diagnostic("error", loc, message, notes or []))

    def warning(self, loc: SourceLoc | None, message: str, notes: list[Diagnostic] | None = None) -> None:
        self.warning_count += 1
        if self.warning_count <= MAX_WARNINGS:
            self.diagnostics.append(Diagnostic("warning", loc, message, notes or []))
        elif self.warning_count == MAX_WARNINGS + 1:
            self.diagnostics.append(Diagnostic("warning", None, f"more than {MAX_WARNINGS} warnings; "
                                                                "the rest are not shown"))

    @staticmethod
    def note(loc: SourceLoc | None, message: str) -> Diagnostic:
        return Diagnostic("note", loc, message)

    @property
    def has_errors(self) -> bool:
        return self.error_count > 0

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise CompileError(self.errors_and_warnings(), self.sources, self.error_count)

    def errors_and_warnings(self) -> list[Diagnostic]:
        """All diagnostics in source order (stages find them in their own order)."""
        out = sorted(self.diagnostics, key=lambda d: (d.loc is None, d.loc.file if d.loc else "",
                                                      d.loc.line if d.loc else 0, d.loc.col if d.loc else 0))
        if self.error_count > self.max_errors:
            out.append(Diagnostic("note", None, f"too many errors ({self.error_count}); "
                                                f"the first {self.max_errors} are shown"))
        return out

    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def render(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.errors_and_warnings())
