"""The post-link step: ``sycl-post-link``'s outputs from one device module.

    split_module(module, mode=..., target=...)  -> [Image]      (split.py)
    write_outputs(images, "out.table", ...)     -> table rows   (this file)

File names, table and ``.prop`` format follow upstream
(``../shared/reference/postlink-formats.md`` §1): ``<dir>/<stem>[_<target>]_<N>``
with ``.bc``/``.ll``, ``.prop`` and ``.sym``.
"""
from __future__ import annotations

import errno
import os

from ..passes.ir import render
from .split import SPLIT_MODES, Image, SplitError, split_module

__all__ = ["split_module", "write_outputs", "Image", "SplitError", "SPLIT_MODES", "table_text"]


def table_text(rows: list[list[str]], properties: bool, symbols: bool) -> str:
    """``util::SimpleTable`` text: ``[Code|Properties|Symbols]`` then one row per image."""
    cols = ["Code"] + (["Properties"] if properties else []) + (["Symbols"] if symbols else [])
    return "[" + "|".join(cols) + "]\n" + "".join("|".join(r) + "\n" for r in rows)


def write_outputs(images: list[Image], table: str, *, out_dir: str | None = None, text_ir: bool = False,
                  properties: bool = False, symbols: bool = False, target: str | None = None) -> list[list[str]]:
    """Write every image's files and then the table; on any failure nothing is left behind."""
    directory = out_dir or os.path.dirname(table) or "."
    stem = os.path.splitext(os.path.basename(table))[0]
    codes = render([im.module for im in images], bitcode=not text_ir)
    files: list[tuple[str, bytes]] = []
    rows = []
    for i, (im, code) in enumerate(zip(images, codes)):
        base = os.path.join(directory, f"{stem}_{i}")
        row = [base + (".ll" if text_ir else ".bc")]
        files.append((row[0], code.encode() if isinstance(code, str) else code))
        if properties:
            prop = os.path.join(directory, f"{stem}_{target}_{i}.prop" if target else f"{stem}_{i}.prop")
            files.append((prop, im.properties.text().encode()))
            row.append(prop)
        if symbols:
            files.append((base + ".sym", "".join(e + "\n" for e in im.entry_points).encode()))
            row.append(base + ".sym")
        rows.append(row)
    files.append((table, table_text(rows, properties, symbols).encode()))
    _write_all(files)
    return rows


def _write_all(files: list[tuple[str, bytes]]) -> None:
    """Write the image files, then the table (the last file) atomically.  If
    anything fails, the files written so far are removed: a table never refers
    to missing or stale files, and no half-written table is ever left.  Output
    folders are made; an ``OSError`` names the path the user gave."""
    from ..frontend.driver import write_output
    written = []
    try:
        for folder in sorted({os.path.dirname(path) or "." for path, _ in files}):
            try:
                os.makedirs(folder, exist_ok=True)
            except FileExistsError:         # a file is in the way
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), folder) from None
            except OSError as err:
                raise OSError(err.errno, err.strerror, folder) from None
        for path, data in files[:-1]:
            with open(path, "wb") as fh:
                written.append(path)
                fh.write(data)
        write_output(*files[-1])
    except BaseException:
        for path in written:
            if os.path.exists(path):
                os.unlink(path)
        raise
