"""A kernel body as basic blocks of instruction lines, for ``lower-work-groups`` (``work_item_loops.py``).

The lowering reads and rewrites LLVM's printing of one (inlined, named) kernel
body line by line: ``_blocks`` cuts it into blocks, and the helpers read a
line's result, its phi pairs and its calls, and rename values.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .ir import Module, metadata_attachments, quote_name, split_operands, split_type
from .srcloc import line_loc

_LOCAL = r'%(?:[-\w.$]+|"[^"]*")'
_LOCAL_RE = re.compile(_LOCAL)
_LABEL_RE = re.compile(r"label (" + _LOCAL + ")")
_RESULT = re.compile(r"^\s*(" + _LOCAL + r") = ")
_CALL = re.compile(r"\bcall\b[^@]*@([-\w.$]+|\"[^\"]*\")\((.*)\)")


def _bare(tok: str) -> str:
    return tok[2:-1] if tok.startswith('%"') else tok[1:]


@dataclass
class _Block:
    name: str
    lines: list[str]

    @property
    def term(self) -> str:
        return self.lines[-1]

    def succs(self) -> list[str]:
        return [_bare(t) for t in _LABEL_RE.findall(self.term)]


def _blocks(body: str) -> list[_Block]:
    out: list[_Block] = []
    pending = ""
    for raw in body.splitlines():
        line = raw.split(" ; ", 1)[0].rstrip() if raw.lstrip().startswith(";") is False else ""
        if not line.strip() or line.strip() == "}":
            continue
        if pending:                        # a switch's case lines
            pending += " " + line.strip()
            if line.strip() == "]":
                out[-1].lines.append(pending)
                pending = ""
            continue
        if not line.startswith(" "):
            label = line.split(":", 1)[0]
            out.append(_Block(_bare("%" + label) if label.startswith('"') else label, []))
            continue
        if line.rstrip().endswith("[") and " switch " in " " + line:
            pending = line.rstrip()
            continue
        if not out:                        # an unnamed entry block
            out.append(_Block("wg.entry0", []))
        out[-1].lines.append(line)
    return out


def _phi_pairs(line: str) -> tuple[str, list[tuple[str, str]]]:
    """``%x = phi T [ v, %b ], ...`` → (prefix up to the type, [(value, block)])."""
    head, rest = line.split(" phi ", 1)
    ty, tail = split_type(rest.lstrip())
    pairs = []
    for item in split_operands(tail.strip().split(", !", 1)[0] if "!" in tail else tail.strip()):
        v, b = split_operands(item.strip()[1:-1])
        pairs.append((v, _bare(b)))
    return f"{head} phi {ty}", pairs


def _render_phi(prefix: str, pairs) -> str:
    return prefix + " " + ", ".join(f"[ {v}, %{quote_name(b)} ]" for v, b in pairs)


def _subst(text: str, old: str, new: str) -> str:
    """``text`` with value ``%old`` renamed ``%new``."""
    return re.sub(re.escape("%" + quote_name(old)) + r'(?![-\w.$"])', f"%{quote_name(new)}", text)


def _is_phi(line: str) -> bool:
    return " = phi " in line


def _result(line: str) -> str | None:
    m = _RESULT.match(line)
    return _bare(m.group(1)) if m else None


def _where(line: str, module: Module) -> str:
    """``file:line`` of a call from its ``!minisycl.loc`` (``srcloc``), else ``line N``
    from its ``!dbg`` location."""
    loc = line_loc(module, line)
    if loc is not None:
        return f"{loc.file}:{loc.line}"
    ref = metadata_attachments(line).get("dbg")
    ops = module.metadata_operands(ref) if ref else []
    f = re.search(r"\bline: (\d+)", ops[0]) if ops else None
    return f"line {f.group(1)}" if f else ""
