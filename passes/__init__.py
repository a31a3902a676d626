"""The middle end: the IR toolkit (``ir.py``), the pass manager (``manager.py``)
and one module per pass, each registered by its module as an entry point
(``pyproject.toml``'s ``minisycl.passes``, read by ``support/plugins.py``) and
listed in ``PASSES``.

A pass is a small class with ``name`` (kebab-case), optional dataclass fields as
options and ``run(module, am) -> PassResult``; its logic is a plain function in
the same module.  Pipelines are text, as in LLVM's ``opt``:
``split-if-device,propagate-aspects{exclude-aspects=fp64}``.
"""
from __future__ import annotations

import dataclasses

from .support import plugins
from .support.diagnostics import UserError

__all__ = ["PASSES", "UPSTREAM_NAMES", "get_pass", "parse_pipeline", "print_pipeline", "describe_passes", "PipelineError"]

#: pass name -> "module:Class", as the pass modules registered them (imported only
#: when used, like xDSL's get_all_passes)
PASSES = plugins.registered(plugins.PASSES)


#: upstream's pass names (DPC++'s ``opt -passes=``) -> the same pass here, with
#: the options that make it do what upstream's does
UPSTREAM_NAMES = {
    "sycl-virtual-functions-analysis": "analyze-virtual-functions{mode=upstream}",
    "sycl-propagate-aspects-usage": "propagate-aspects",
}


class PipelineError(UserError):
    """A pipeline string names an unknown pass or a bad option."""


def get_pass(name: str):
    """The pass class registered as ``name``."""
    target = PASSES.get(name)
    if target is None:
        raise PipelineError(f"unknown pass '{name}'; known passes: {', '.join(sorted(PASSES))}")
    return plugins.load(target)


def _split_top(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [p for p in out if p]


def _convert(cls, field: dataclasses.Field, raw: str):
    kind = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", str(field.type))
    if kind == "bool":
        if raw.lower() in ("1", "true", "yes", ""):
            return True
        if raw.lower() in ("0", "false", "no"):
            return False
        raise PipelineError(f"pass '{cls.name}': option '{field.name}' expects true/false, got '{raw}'")
    if kind == "int":
        try:
            return int(raw)
        except ValueError:
            raise PipelineError(f"pass '{cls.name}': option '{field.name}' expects an integer, got '{raw}'") from None
    return raw


def parse_pipeline(text: str) -> list:
    """``"a,b{opt=v;flag}"`` → pass instances; errors name the bad part."""
    passes = []
    if text.count("{") != text.count("}"):
        raise PipelineError(f"unbalanced braces in pipeline '{text}'")
    for item in _split_top(text):
        name, _, opts = item.partition("{")
        name = name.strip()
        if name in UPSTREAM_NAMES:          # upstream's name: its options first, the user's after
            name, _, implied = UPSTREAM_NAMES[name].partition("{")
            opts = implied.rstrip("}") + (";" + opts if opts else "")
        cls = get_pass(name)
        fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else {}
        kwargs = {}
        for opt in filter(None, (o.strip() for o in opts.rstrip("}").split(";"))):
            key, _, value = opt.partition("=")
            field = fields.get(key.strip())
            if field is None:
                known = ", ".join(sorted(fields)) or "none"
                raise PipelineError(f"pass '{name}' has no option '{key.strip()}' (options: {known})")
            kwargs[field.name] = _convert(cls, field, value.strip())
        passes.append(cls(**kwargs))
    if not passes:
        raise PipelineError("empty pipeline")
    return passes


def print_pipeline(passes) -> str:
    """The canonical pipeline string (non-default options only); it re-parses to the same passes."""
    out = []
    for p in passes:
        opts = []
        if dataclasses.is_dataclass(p):
            for f in dataclasses.fields(p):
                value = getattr(p, f.name)
                if value != f.default:
                    shown = str(value).lower() if isinstance(value, bool) else str(value)
                    opts.append(f"{f.name.replace('_', '-')}={shown}")
        out.append(p.name + ("{" + ";".join(opts) + "}" if opts else ""))
    return ",".join(out)


def describe_passes() -> list[tuple[str, str, list[str]]]:
    """``(name, summary, options)`` of every registered pass, for ``minisycl opt
    --help``: the summary is the first line of the pass module's docstring (which
    starts ``<name>: ``), each option ``name=<type>`` with its default, its
    choices and the ``help`` of its dataclass field, so the help cannot fall
    behind the registry or the options the pipeline parser accepts."""
    import sys
    out = []
    for name in PASSES:
        cls = get_pass(name)
        doc = (sys.modules[cls.__module__].__doc__ or cls.__doc__ or "").strip().splitlines()
        summary = doc[0].strip() if doc else ""
        if summary.startswith(name + ":"):
            summary = summary[len(name) + 1:].strip()
        options = []
        for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            default = str(f.default).lower() if isinstance(f.default, bool) else repr(f.default)
            choices = f.metadata.get("choices")
            text = f"{f.name.replace('_', '-')}=<{'|'.join(choices) if choices else kind}> (default {default})"
            if f.metadata.get("help"):
                text += f": {f.metadata['help']}"
            options.append(text)
        out.append((name, summary, options))
    return out
