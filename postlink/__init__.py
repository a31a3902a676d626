"""The post-link step: ``sycl-post-link``'s outputs from one device module.

    split_module(module, mode=..., target=...)        -> [Image]        (split.py)
    write_tables(images, [TableSpec(...), ...], ...)  -> rows per table (this file)

File names, table and ``.prop`` format follow upstream
(``docs/formats.md``, "File table"): ``<dir>/<stem>_<N>`` with
``.bc``/``.ll`` and ``.sym``, ``<dir>/<stem>[_<target>]_<N>.prop``.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass

from ..passes.ir import verify_and_serialize
from ..device_configs.targets import TargetInfo
from ..passes.support.ir_contract import DEVICE_REQUIREMENTS
from .properties import imported_functions
from .propertyset import PropertySets, string_value
from .split import SPLIT_MODES, Image, SplitError, split_module, target_compatible

__all__ = ["split_module", "write_outputs", "write_tables", "write_table_groups", "TableSpec", "Image", "SplitError", "SPLIT_MODES",
           "table_text"]


def table_text(rows: list[list[str]], properties: bool, symbols: bool, imports: bool = False) -> str:
    """``util::SimpleTable`` text: ``[Code|Properties|Imported Symbols|Symbols]``
    (the columns asked for) then one row per image."""
    cols = ["Code"] + (["Properties"] if properties else []) + (["Imported Symbols"] if imports else []) + \
        (["Symbols"] if symbols else [])
    return "[" + "|".join(cols) + "]\n" + "".join("|".join(r) + "\n" for r in rows)


@dataclass(frozen=True)
class TableSpec:
    """One ``-o [TARGET,]FILE.table``: the table's path, the target named (or
    ``None``), and that target's device config (``None`` when the target is
    not one we know, or when there is no target)."""
    table: str
    target: str | None = None
    config: TargetInfo | None = None


def with_compile_target(props: PropertySets, target: str) -> PropertySets:
    """``props`` plus ``compile_target`` at the end of ``[SYCL/device
    requirements]``, as upstream's ``saveModuleProperties`` adds it per table
    (a key already there keeps its value)."""
    out = PropertySets()
    for set_name, entries in props.sets.items():
        for key, (_, value) in entries.items():
            out.add(set_name, key, value)
        if set_name == DEVICE_REQUIREMENTS:
            out.add(set_name, "compile_target", string_value(target))
    if DEVICE_REQUIREMENTS not in props.sets:
        out.add(DEVICE_REQUIREMENTS, "compile_target", string_value(target))
    return out


def write_tables(images: list[Image], tables: list[TableSpec], *, out_dir: str | None = None, text_ir: bool = False,
                 properties: bool = False, symbols: bool = False, imports: bool = False,
                 inputs=()) -> list[list[list[str]]]:
    """Write every image once and one table per ``TableSpec`` (upstream's
    ``saveModule`` loop over its ``-o`` outputs): images are numbered once and
    named after the *first* table (``<dir>/<stem>_<N>.ll|.bc|.sym``, ``<dir>``
    being ``out_dir`` or that table's folder).  Each table lists the images
    compatible with its target (``target_compatible``); a table without a
    target, or whose target is not a known device config, lists them all, as
    upstream does.  With ``properties``, each table gets its own ``.prop``
    files: ``<stem>_<N>.prop``, or ``<stem>_<target>_<N>.prop`` carrying
    ``compile_target``.  On any failure nothing is left behind.  Returns the
    rows of each table.  ``imports`` (upstream's older ``-imports``): an
    ``<stem>_<N>.imported_sym`` file per image (``properties.imported_functions``)
    and its column.  No file written may be one of ``inputs`` or another
    one written (``passes.support.output.check_outputs``): an image named like
    the input module, or two tables at one path, is refused before anything is
    written."""
    return write_table_groups([(images, tables)], out_dir=out_dir, text_ir=text_ir, properties=properties,
                              symbols=symbols, imports=imports, inputs=inputs)[0]


def write_table_groups(groups: list[tuple[list[Image], list[TableSpec]]], *, out_dir: str | None = None,
                       text_ir: bool = False, properties: bool = False, symbols: bool = False,
                       imports: bool = False, inputs=()) -> list[list[list[list[str]]]]:
    """``write_tables`` for several splits of one module at once, all or
    nothing: each group's images are named after that group's first table
    (``post-link`` gives the design's AOT flow its own images per target).
    Returns the rows of each table, per group."""
    files: list[tuple[str, bytes]] = []     # two groups naming one file: refused by _write_all
    tables_out: list[tuple[str, bytes]] = []
    all_rows = []
    for images, tables in groups:
        group: dict[str, bytes] = {}        # (a .prop two tables of one target share is one file)
        rows = _group_files(images, tables, group, out_dir, text_ir, properties, symbols, imports)
        files += group.items()
        tables_out += [(spec.table, table_text(r, properties, symbols, imports).encode("utf-8", "surrogateescape"))
                       for spec, r in zip(tables, rows)]      # names' bytes kept
        all_rows.append(rows)
    _write_all(files, tables_out, inputs)
    return all_rows


def _group_files(images: list[Image], tables: list[TableSpec], files: dict[str, bytes], out_dir, text_ir: bool,
                 properties: bool, symbols: bool, imports: bool) -> list[list[list[str]]]:
    """Add one group's image, ``.prop`` and ``.sym`` files to ``files``; the rows of its tables."""
    first = tables[0].table
    directory = out_dir if out_dir is not None else os.path.dirname(first)
    prefix = os.path.join(directory, os.path.splitext(os.path.basename(first))[0])
    rows: list[list[list[str]]] = [[] for _ in tables]
    codes = _serialized(images, not text_ir)
    for i, im in enumerate(images):
        ir = f"{prefix}_{i}" + (".ll" if text_ir else ".bc")
        files[ir] = codes[i]
        sym = f"{prefix}_{i}.sym"
        imported = f"{prefix}_{i}.imported_sym"
        if imports:
            files[imported] = "".join(n + "\n" for n in imported_functions(im.module)).encode("utf-8", "surrogateescape")
        if symbols:
            # a name's bytes as they are, UTF-8 or not (unquote_name: surrogateescape)
            files[sym] = "".join(e + "\n" for e in im.entry_points).encode("utf-8", "surrogateescape")
        for spec, table_rows in zip(tables, rows):
            if spec.config is not None and not target_compatible(im, spec.config):
                continue
            row = [ir]
            if properties:
                if spec.target:
                    prop = f"{prefix}_{spec.target}_{i}.prop"
                    files[prop] = with_compile_target(im.properties, spec.target).text().encode("utf-8", "surrogateescape")
                else:
                    prop = f"{prefix}_{i}.prop"
                    files[prop] = im.properties.text().encode("utf-8", "surrogateescape")
                row.append(prop)
            if imports:
                row.append(imported)
            if symbols:
                row.append(sym)
            table_rows.append(row)
    return rows


def _serialized(images: list[Image], bitcode: bool) -> list:
    """Every image's code (``verify_and_serialize``).  Images started beside the
    split (``split_module(serialize=...)``: a forked child on a core of its own)
    are taken each when its file is written (``write_files`` calls it), so the
    files of the images the child has finished go to disk while it makes the
    rest (on 16 cores, all taken before any file was written made
    ``-split=kernel`` 1.54x LLVM's work against 1.12x).  Otherwise all are made
    before any file is written: LLVM's work on one image after another, not one
    image between two files (on the CI machine's busy cores every system call
    made LLVM's next image cost more: at 2,000 kernels, LLVM's work between the
    files cost 1.62 s of CPU against 1.36 s all at once)."""
    modules = [im.module for im in images]
    if any(m.started for m in modules):
        return [lambda m=m: verify_and_serialize([m], bitcode=bitcode)[0] for m in modules]
    return verify_and_serialize(modules, bitcode=bitcode)


def write_outputs(images: list[Image], table: str, *, out_dir: str | None = None, text_ir: bool = False,
                  properties: bool = False, symbols: bool = False, target: str | None = None) -> list[list[str]]:
    """One table of ``images`` (all of them; ``target`` only names the ``.prop``
    files and adds ``compile_target``)."""
    return write_tables(images, [TableSpec(table, target)], out_dir=out_dir, text_ir=text_ir,
                        properties=properties, symbols=symbols)[0]


def _write_all(files: list[tuple[str, bytes]], tables: list[tuple[str, bytes]], inputs) -> None:
    """Write the images and the tables all or nothing (``passes.support.output``):
    a table never refers to missing or stale files, and no half-written file is
    left.  Output folders are not made (as for every command)."""
    from ..passes.support.output import destination, write_files
    for path, _ in tables:                  # name the table the user gave, not an image beside it
        destination(path)
    heads = {os.path.dirname(path) for path, _ in files}    # images share a folder: abspath once per folder
    for folder in sorted({os.path.abspath(head) for head in heads}):
        if not os.path.isdir(folder):       # -out-dir
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), folder)
    write_files(files + tables, inputs=inputs)
