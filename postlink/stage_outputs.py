"""How ``minisycl build`` writes a stage's products as files (``--stop-after
STAGE -o PATH`` writes them at ``PATH``; ``--emit STAGE`` beside the bundle, at
``emitted_path``).

    stage           written at PATH as
    compile         the module as LLVM IR (bitcode when PATH ends in .bc); with
                    several sources, one per source at <stem>_<N><ext>
    link, opt       the (device) module as LLVM IR (bitcode when PATH ends in .bc)
    post-link       a sycl-post-link file table [Code|Properties|Symbols] whose
                    rows name <stem>_<image>.bc, .prop and .sym beside it
    device-globals  the device-global table as JSON
    native          a file table [Code] whose rows name <stem>_<image>.o beside it
                    (the AOT images' object code; empty without --target)
    bundle          the bundle
"""
from __future__ import annotations

import json
import os

from ..passes.ir import verify_and_serialize
from ..passes.support.diagnostics import UserError
from . import table_text

__all__ = ["product_files", "emitted_path", "EXTENSIONS"]

#: the file extension of each stage's product, for ``emitted_path``
EXTENSIONS = {"compile": ".ll", "link": ".ll", "opt": ".ll", "post-link": ".table", "device-globals": ".json",
              "native": ".table", "bundle": ".bundle"}


def emitted_path(output: str, stage: str) -> str:
    """Where ``--emit STAGE`` writes: ``<output without extension>.<stage><ext>``."""
    return f"{os.path.splitext(output)[0]}.{stage}{EXTENSIONS[stage]}"


def _one_file(path: str, stage: str) -> None:
    if path == "-":
        raise UserError(f"the '{stage}' stage writes several files: give -o a file name, not '-'")


def _ir(modules, path: str) -> list:
    return verify_and_serialize(modules, bitcode=path.endswith(".bc"))


def product_files(stage: str, products: dict, path: str) -> list[tuple[str, bytes | str]]:
    """The files (path, contents) that write ``stage``'s products at ``path``
    (see the module docstring)."""
    stem, ext = os.path.splitext(path)
    if stage == "compile":
        modules = products["modules"]
        if len(modules) == 1:
            return [(path, _ir(modules, path)[0])]
        _one_file(path, stage)
        return [(f"{stem}_{i}{ext}", code) for i, code in enumerate(_ir(modules, path))]
    if stage == "link":
        return [(path, _ir([products["module"]], path)[0])]
    if stage == "opt":
        return [(path, _ir([products["device"]], path)[0])]
    if stage == "post-link":
        _one_file(path, stage)
        files, rows = [], []
        for im in products["images"]:
            row = [f"{stem}_{im.name}.bc", f"{stem}_{im.name}.prop", f"{stem}_{im.name}.sym"]
            files += [(row[0], im.ir), (row[1], im.properties.text()),
                      (row[2], "".join(e + "\n" for e in im.entry_points))]
            rows.append(row)
        return files + [(path, table_text(rows, properties=True, symbols=True))]
    if stage == "device-globals":
        return [(path, json.dumps(products["device_globals"], indent=2, sort_keys=True) + "\n")]
    if stage == "native":
        _one_file(path, stage)
        files = [(f"{stem}_{name}.o", obj) for name, obj in products["native"].items()]
        return files + [(path, table_text([[p] for p, _ in files], properties=False, symbols=False))]
    if stage == "bundle":
        return [(path, products["bundle"].to_bytes())]
    raise UserError(f"unknown stage '{stage}'")
