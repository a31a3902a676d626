"""The IR layer: the one way every stage reads, edits and writes LLVM IR.

* ``bridge``  — the only code that calls ``llvmlite.binding`` for modules
  (parse text or bitcode, verify, print, bitcode out); ``parse_assembly`` and
  ``parse_bitcode`` (bitcode this process wrote) hand LLVM's module to code
  that compiles it (native AOT code, initial values).
* ``lexer``   — LLVM's token grammar: quoting, types, constants, and the
  scanners every fact about references is read with.
* ``module``  — a module as its top-level entities on LLVM's canonical
  printing, with the facts passes ask for; its entities (``entities``, with
  ``attributes`` and ``call_sites``), whole-entity edits (``edits``) and
  extraction of a part (``extraction``) each in a module of their own.
* ``loading`` — ``load`` (``load_and_run``: work begun while LLVM checks
  the input, ``speculation``) / ``parse_text`` / ``verify_and_serialize`` /
  ``link``: files and text in, verified text or bitcode out, LLVM's plain
  linker (``passes/link.py`` is the SYCL-aware one over it; the front end's
  multi-source compile uses it as it is).

Why text and not LLVM's in-memory module: extracting one device image then
costs in proportion to the image, where cloning a module per image costs the
whole module each time (``bench/bench_postlink.py`` shows both).
"""
from .bridge import (IRError, complaint, emit_ptx, host_machine, in_child, module_text, new_context, parse_and_link, parse_assembly, parse_bitcode,
                     retarget, run_optimizer, run_sroa)
from .loading import (InternalCompilerError, link, load, load_and_run, parse_text, read_untrusted_bitcode, verify_and_serialize,
                      verify_generated)
from .items import build_item
from .kernel_params import check_signature, ir_signature, kernel_signature
from .layout import Layout, LayoutError
from .lexer import escaped_bytes, quote_name, quote_string, split_operands, split_type, tokens, unquote_name
from .sycl_names import ASSERT_FAIL, ASSERT_MESSAGE
from .attributes import attachment_pairs, metadata_attachments, parse_attribute_group, without_attachments
from .call_sites import function_type, indirect_call_types, indirect_calls
from .entities import DISCARDABLE_LINKAGES, USED_LISTS, Function, Global
from .extraction import DifferenceView
from .module import Module
from ..support.gc_pause import gc_paused

__all__ = ["Layout", "LayoutError", "build_item", "IRError", "Module", "Function", "Global", "load", "load_and_run", "parse_text", "verify_and_serialize",
           "link", "verify_generated", "InternalCompilerError", "quote_name", "unquote_name",
           "split_operands", "split_type", "parse_attribute_group", "gc_paused", "DifferenceView", "USED_LISTS",
           "DISCARDABLE_LINKAGES", "indirect_calls", "indirect_call_types", "function_type", "metadata_attachments",
           "attachment_pairs", "without_attachments", "quote_string", "escaped_bytes", "tokens",
           # a kernel's signature from its IR, and its written one checked against it (kernel_params.py)
           "kernel_signature", "ir_signature", "check_signature",
           # minisycl's assert hook and its GPU flag (sycl_names.py)
           "ASSERT_FAIL", "ASSERT_MESSAGE",
           # LLVM's own modules, for code that compiles them (native AOT code, initial values)
           "parse_assembly", "parse_bitcode",
           # for the runtime's JIT: untrusted bitcode in, LLVM's own modules (bridge.py)
           "read_untrusted_bitcode", "complaint", "new_context", "parse_and_link", "retarget", "run_sroa",
           "run_optimizer", "module_text",
           # code generation where an abort of LLVM cannot take the process (bridge.py)
           "in_child",
           # for the runtime's CUDA devices: PTX from NVPTX IR
           "emit_ptx", "host_machine"]
