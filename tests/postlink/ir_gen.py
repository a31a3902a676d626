"""Random valid device modules in DPC++'s IR style, built to stress an IR reader.

``modules()`` is a hypothesis strategy of ``GenModule``: a description of the
module (functions, globals, what each body does) that renders itself as LLVM
IR text and knows the facts a test needs without reading that text back:
the split's entry points and groups, the device globals, the signature of
every indirect call.

What it puts in on purpose:
  * names that must be quoted: spaces, ``=``, `` = ``, ``#``, ``"`` (as
    ``\\22``), ``@``, brackets, ``!``, ``;``, backslashes, non-ASCII (raw UTF-8
    or escaped byte by byte), names that look like SPIR-V/SYCL builtins;
  * kernels (``spir_kernel``) and ``spir_func`` helpers in an acyclic call
    graph; ``"sycl-module-id"`` on kernels and SYCL_EXTERNAL functions, with
    module ids that need escaping, so ``-split=source`` has several groups;
  * indirect calls through a function pointer loaded from a global, through a
    slot of a vtable-like constant array, and through a pointer of unknown
    origin; ``"referenced-indirectly"`` candidates of the same signatures;
  * device globals in ``addrspace(1)`` with ``"sycl-unique-id"`` and
    ``"sycl-device-global-size"`` in ``@llvm.compiler.used``, some of them as
    ``addrspacecast`` members; an ``@llvm.used`` of kernels and others; plain globals, strings whose bytes look like IR,
    globals that point at globals;
  * ``linkonce_odr`` functions and vtables in their own ``comdat``;
  * metadata naming values (``!opencl.kernels``, ``!callees`` on indirect
    calls, function attachments, a named list of arbitrary values) and, when
    drawn, debug info (a compile unit, a subprogram per definition, a location
    on every call).

No ``"indirectly-callable"`` function is generated: virtual-function
outlining moves those into their own images by design, which LLVM's
internalize + GlobalDCE does not model.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import strategies as st

SIGS = (("i32", ("i32",)), ("void", ("ptr",)), ("i32", ("i32", "i32")), ("float", ("float",)))
KERNEL_SIG = ("void", ("ptr addrspace(1)", "i32"))
ARG = {"i32": "i32 1", "ptr": "ptr null", "float": "float 1.000000e+00"}
RET = {"i32": "ret i32 0", "void": "ret void", "float": "ret float 0.000000e+00"}
MODULE_IDS = ("a.cpp", "b.cpp", 'dir x/c = #1 "q".cpp')
#: upstream's ``isSpirvSyclBuiltin``/``isESIMDBuiltin``/``isGenericBuiltin``: "_Z", any digits, then the prefix
BUILTIN = re.compile(r'_Z\d*__(?:spirv|sycl|esimd)_|__builtin_')

_FRAGMENTS = ["f", "k", "g", "x1", "_Z3foo", "Set", " ", "=", " = ", "#", "#0", '"', "@", "@k", "(", ")", ",",
              "!", "!{", "\\", "{", "}", ";", "é", "λ", "漢", "%", "*", "[", "]", ":", "$", ".", "-", "0"]
_BUILTIN_NAMES = ["_Z20__spirv_GlobalSize", "_Z__sycl_helper", "__builtin_thing", "_Z6__esimd_x"]

DATALAYOUT = ("e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64")


def quote(name: str, escape_all: bool = False) -> str:
    """A global's name as LLVM text: bare when LLVM allows, else quoted with
    ``\\XX`` escapes (``escape_all``: every non-ASCII byte escaped too)."""
    if re.fullmatch(r'[-a-zA-Z$._][-a-zA-Z$._0-9]*', name):
        return name
    return '"' + escape(name, escape_all) + '"'


def escape(text: str, escape_all: bool = False) -> str:
    out = []
    for ch in text:
        if ch in '"\\' or ord(ch) < 32 or (escape_all and ord(ch) > 126):
            out.append("".join(f"\\{b:02X}" for b in ch.encode()))
        else:
            out.append(ch)
    return "".join(out)


@dataclass
class Fn:
    name: str
    kind: str                       # kernel | external | helper | decl
    sig: tuple
    linkage: str = ""
    module_id: str | None = None
    comdat: bool = False
    hidden: bool = False
    referenced_indirectly: bool = False
    noinline: bool = False
    note: str | None = None         # a string attribute whose value looks like IR
    ops: list = field(default_factory=list)
    attachment: str | None = None   # name of a value a function metadata attachment refers to

    @property
    def defined(self) -> bool:
        return self.kind != "decl"


@dataclass
class Gv:
    name: str
    kind: str                       # plain | string | fptr | vtable | gptr | dg | extern
    linkage: str = ""
    addrspace: int = 0
    targets: list = field(default_factory=list)   # functions (fptr, vtable) or one global (gptr)
    content: str = ""
    comdat: bool = False
    uid: str = ""

    @property
    def defined(self) -> bool:
        return self.kind != "extern"

    @property
    def ptr(self) -> str:
        return "ptr" if self.addrspace == 0 else f"ptr addrspace({self.addrspace})"


@dataclass
class GenModule:
    functions: list[Fn]
    globals: list[Gv]
    used: list[str]                 # @llvm.compiler.used members, in order
    named: list[str]                # values !gen.refs names
    kernels_md: bool
    debug: bool
    escape_all: bool
    intrinsic: bool
    callees_md: bool = True         # whether indirect calls may carry !callees
    llvm_used: list = field(default_factory=list)   # @llvm.used members (kernels, as DPC++ lists them; others)

    # --- facts -------------------------------------------------------------

    def fn(self, name: str) -> Fn:
        return next(f for f in self.functions if f.name == name)

    def gv(self, name: str) -> Gv:
        return next(g for g in self.globals if g.name == name)

    def entry_points(self) -> list[str]:
        """What post-link must take as entry points (upstream ``isEntryPoint``), in module order."""
        return [f.name for f in self.functions
                if f.defined and (f.kind == "kernel" or (f.module_id is not None and not BUILTIN.match(f.name)))]

    def groups(self, mode: str) -> list[list[str]]:
        """The entry points of each image, in upstream's output order (descending key bytes)."""
        keyed: dict[str, list[str]] = {}
        for name in self.entry_points():
            f = self.fn(name)
            # the per-source key of computeFuncCategoryForSplittingPerSource with only the module id set
            key = name if mode == "kernel" else (f.module_id or "") + "-" * 11
            keyed.setdefault(key, []).append(name)
        if not keyed:
            return [[]]
        return [keyed[k] for k in sorted(keyed, key=lambda k: k.encode(), reverse=True)]

    def device_globals(self) -> set[str]:
        return {g.name for g in self.globals if g.kind == "dg"}

    def device_roots(self) -> list[str]:
        """split-if-device's device roots: entry points plus defined device globals."""
        return self.entry_points() + [g.name for g in self.globals if g.kind == "dg" and g.defined]

    def icall_signatures(self, name: str) -> set[tuple]:
        """Signatures of the indirect calls in a function's body."""
        return {self._icall_sig(op) for op in self.fn(name).ops if op[0].startswith("icall")}

    def referenced_indirectly(self) -> dict[str, tuple]:
        """Defined non-kernel ``"referenced-indirectly"`` functions and their signatures."""
        return {f.name: f.sig for f in self.functions if f.referenced_indirectly and f.defined}

    def users(self, name: str) -> set[str]:
        """Functions and globals whose body or initialiser refers to ``name``
        (LLVM's users; metadata and ``@llvm.compiler.used`` are no users here)."""
        out = {f.name for f in self.functions
               if any(op[0] in ("call", "load", "addr", "icall_fp", "icall_vt") and op[1] == name for op in f.ops)}
        return out | {g.name for g in self.globals if name in g.targets}

    def _icall_sig(self, op) -> tuple:
        if op[0] == "icall_fp":
            return self.fn(self.gv(op[1]).targets[0]).sig
        if op[0] == "icall_vt":
            return self.fn(self.gv(op[1]).targets[op[2]]).sig
        return op[1]

    # --- text --------------------------------------------------------------

    def text(self, drop_from_used: set[str] = frozenset(), llvm_used: bool = True) -> str:
        """The module as LLVM IR; ``drop_from_used``: members to leave out of
        ``@llvm.compiler.used``; ``llvm_used``: whether ``@llvm.used`` is there."""
        return _Render(self, drop_from_used, llvm_used).run()


class _Render:
    def __init__(self, m: GenModule, drop_from_used, llvm_used: bool):
        self.m, self.drop, self.llvm_used = m, drop_from_used, llvm_used
        self.attr_groups: dict[str, int] = {}
        self.md: list[str] = []         # metadata node bodies; node i is !i

    def q(self, name: str) -> str:
        return "@" + quote(name, self.m.escape_all)

    def node(self, body: str) -> str:
        self.md.append(body)
        return f"!{len(self.md) - 1}"

    def group(self, attrs: list[str]) -> str:
        if not attrs:
            return ""
        text = " ".join(attrs)
        return " #" + str(self.attr_groups.setdefault(text, len(self.attr_groups)))

    def sattr(self, key: str, value: str | None = None) -> str:
        return f'"{key}"' if value is None else f'"{key}"="{escape(value, self.m.escape_all)}"'

    def value_ref(self, name: str) -> str:
        """``<type> @name`` for metadata operands and initialisers."""
        for g in self.m.globals:
            if g.name == name:
                return f"{g.ptr} {self.q(name)}"
        return f"ptr {self.q(name)}"

    def run(self) -> str:
        m = self.m
        out = [f'target datalayout = "{DATALAYOUT}"\n', 'target triple = "spir64-unknown-unknown"\n\n']
        if m.debug:
            self.cu = self.node("")      # filled in below
            self.file = self.node('!DIFile(filename: "a b = #.cpp", directory: "/src/d \\22q\\22")')
            self.empty = self.node("!{}")
            self.sptype = self.node(f"!DISubroutineType(types: {self.empty})")
            self.md[int(self.cu[1:])] = (f'distinct !DICompileUnit(language: DW_LANG_C_plus_plus_14, file: {self.file}, '
                                          'producer: "gen", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)')
        for f in m.functions:
            if f.comdat:
                out.append(f"${quote(f.name, m.escape_all)} = comdat any\n")
        for g in m.globals:
            if g.comdat:
                out.append(f"${quote(g.name, m.escape_all)} = comdat any\n")
        out.append("\n")
        for g in m.globals:
            out.append(self.global_line(g) + "\n")
        lists = [("llvm.compiler.used", [n for n in m.used if n not in self.drop])]
        if self.llvm_used:
            lists.append(("llvm.used", m.llvm_used))
        for list_name, used in lists:
            if not used:
                continue
            members = []
            for n in used:
                g = next((g for g in m.globals if g.name == n), None)
                if g is not None and g.addrspace:
                    members.append(f"ptr addrspacecast ({g.ptr} {self.q(n)} to ptr)")
                else:
                    members.append(f"ptr {self.q(n)}")
            out.append(f"@{list_name} = appending global [{len(used)} x ptr] [{', '.join(members)}], "
                       'section "llvm.metadata"\n')
        out.append("\n")
        for i, f in enumerate(m.functions):
            out.append(self.function(i, f) + "\n")
        if m.intrinsic:
            out.append("declare void @llvm.assume(i1 noundef)\n\n")
        for text, n in self.attr_groups.items():
            out.append(f"attributes #{n} = {{ {text} }}\n")
        named = []
        if m.kernels_md:
            ks = [self.node(f"!{{ptr {self.q(f.name)}}}") for f in m.functions if f.kind == "kernel"]
            named.append(f"!opencl.kernels = !{{{', '.join(ks)}}}")
        if m.named:
            ops = ", ".join(self.value_ref(n) for n in m.named)
            refs = self.node("!{" + ops + ', !"ptr @k = #0 !{"}')         # a string that reads like IR
            named.append(f"!gen.refs = !{{{refs}}}")
        if m.debug:
            named.append(f"!llvm.dbg.cu = !{{{self.cu}}}")
            flag = self.node('!{i32 2, !"Debug Info Version", i32 3}')
            named.append(f"!llvm.module.flags = !{{{flag}}}")
        out.append("\n" + "".join(n + "\n" for n in named))
        out.extend(f"!{i} = {body}\n" for i, body in enumerate(self.md))
        return "".join(out)

    def global_line(self, g: Gv) -> str:
        link = g.linkage + " " if g.linkage else ""
        space = f"addrspace({g.addrspace}) " if g.addrspace else ""
        tail = ", comdat" if g.comdat else ""
        if g.kind == "plain":
            return f"{self.q(g.name)} = {link}{space}global i32 7{tail}, align 4"
        if g.kind == "string":
            data = g.content.encode() + b"\0"
            body = "".join(chr(b) if 32 <= b < 127 and b not in b'"\\' else f"\\{b:02X}" for b in data)
            return f'{self.q(g.name)} = {link}unnamed_addr constant [{len(data)} x i8] c"{body}"{tail}, align 1'
        if g.kind == "fptr":
            return f"{self.q(g.name)} = {link}{space}global ptr {self.q(g.targets[0])}{tail}, align 8"
        if g.kind == "gptr":
            return f"{self.q(g.name)} = {link}{space}global {self.value_ref(g.targets[0])}{tail}, align 8"
        if g.kind == "vtable":
            n = len(g.targets) + 1
            slots = ", ".join(["ptr null"] + [f"ptr {self.q(t)}" for t in g.targets])
            return (f"{self.q(g.name)} = {link}unnamed_addr constant {{ [{n} x ptr] }} {{ [{n} x ptr] [{slots}] }}"
                    f"{tail}, align 8")
        if g.kind == "dg":
            attrs = [self.sattr("sycl-unique-id", g.uid), self.sattr("sycl-device-global-size", "4")]
            return f"{self.q(g.name)} = {link}{space}global i32 0{tail}, align 4{self.group(attrs)}"
        return f"{self.q(g.name)} = external {space}global i32, align 4"

    def function(self, i: int, f: Fn) -> str:
        ret, params = f.sig
        cc = "spir_kernel" if f.kind == "kernel" else "spir_func"
        attrs = []
        if f.module_id is not None:
            attrs.append(self.sattr("sycl-module-id", f.module_id))
        if f.noinline:
            attrs.append("noinline")
        if f.referenced_indirectly:
            attrs.append(self.sattr("referenced-indirectly"))
        if f.note is not None:
            attrs.append(self.sattr("gen-note", f.note))
        group = self.group(attrs)
        if not f.defined:
            return f"declare {cc} {ret} {self.q(f.name)}({', '.join(params)}){group}\n"
        words = [w for w in (f.linkage, "hidden" if f.hidden else "", cc, ret) if w]
        plist = ", ".join(f"{t} %p{j}" for j, t in enumerate(params))
        tail = " comdat" if f.comdat else ""
        md = []
        if f.attachment is not None:
            md.append(f" !gen.attached {self.node('!{' + self.value_ref(f.attachment) + '}')}")
        loc = ""
        if self.m.debug:
            sp = self.node(f'distinct !DISubprogram(name: "{escape(f.name)}", scope: {self.file}, file: {self.file}, '
                           f'line: {i + 1}, type: {self.sptype}, scopeLine: {i + 1}, spFlags: DISPFlagDefinition, '
                           f'unit: {self.cu})')
            md.append(f" !dbg {sp}")
            loc = f", !dbg {self.node(f'!DILocation(line: {i + 1}, column: 3, scope: {sp})')}"
        body = ["entry:", "  %slot = alloca ptr, align 8"]
        for k, op in enumerate(f.ops):
            body += self.op(k, op, loc)
        if self.m.intrinsic:
            body.append(f"  call void @llvm.assume(i1 true){loc}")
        body.append("  " + RET[ret])
        return (f"define {' '.join(words)} {self.q(f.name)}({plist}){group}{tail}{''.join(md)} {{\n"
                + "\n".join(body) + "\n}\n")

    def call(self, k: int, sig: tuple, callee: str, loc: str, callees_md: str = "") -> str:
        ret, params = sig
        args = ", ".join(ARG[t] for t in params)
        lhs = "" if ret == "void" else f"%r{k} = "
        return f"  {lhs}call spir_func {ret} {callee}({args}){callees_md}{loc}"

    def callees(self, sig: tuple, wanted: bool) -> str:
        """``, !callees !N`` naming every non-kernel function of that signature."""
        names = [f.name for f in self.m.functions if f.kind != "kernel" and f.sig == sig]
        if not wanted or not names or not self.m.callees_md:
            return ""
        return ", !callees " + self.node("!{" + ", ".join(f"ptr {self.q(n)}" for n in names) + "}")

    def op(self, k: int, op, loc: str) -> list[str]:
        kind = op[0]
        if kind == "call":
            return [self.call(k, self.m.fn(op[1]).sig, self.q(op[1]), loc)]
        if kind == "load":
            g = self.m.gv(op[1])
            return [f"  %v{k} = load i32, {g.ptr} {self.q(g.name)}, align 4"]
        if kind == "addr":
            return [f"  store {self.value_ref(op[1])}, ptr %slot, align 8"]
        if kind == "icall_fp":
            g = self.m.gv(op[1])
            sig = self.m.fn(g.targets[0]).sig
            return [f"  %fp{k} = load ptr, ptr {self.q(g.name)}, align 8",
                    self.call(k, sig, f"%fp{k}", loc, self.callees(sig, op[2]))]
        if kind == "icall_vt":
            g = self.m.gv(op[1])
            n = len(g.targets) + 1
            sig = self.m.fn(g.targets[op[2]]).sig
            return [f"  %gep{k} = getelementptr inbounds {{ [{n} x ptr] }}, ptr {self.q(g.name)}, i64 0, i32 0, "
                    f"i64 {op[2] + 1}",
                    f"  %fp{k} = load ptr, ptr %gep{k}, align 8",
                    self.call(k, sig, f"%fp{k}", loc, self.callees(sig, op[3]))]
        # icall_any: through a pointer of unknown origin
        sig = op[1]
        return [f"  %fp{k} = load ptr, ptr %slot, align 8", self.call(k, sig, f"%fp{k}", loc, self.callees(sig, op[2]))]


# --- the strategy -------------------------------------------------------------

def _names(n: int, exclude: frozenset):
    plain = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_.$]{0,6}", fullmatch=True)
    nasty = st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=5).map("".join)
    kinds = [plain] + ([] if "quoted-names" in exclude else [nasty, nasty]) + \
        ([] if "builtin-names" in exclude else [st.sampled_from(_BUILTIN_NAMES)])
    one = st.one_of(*kinds).filter(lambda s: not s.startswith("llvm."))
    return st.lists(one, min_size=n, max_size=n, unique=True)


FEATURES = ("quoted-names", "builtin-names", "metadata", "debug", "compiler-used", "comdat",
            "referenced-indirectly", "notes", "device-globals")


@st.composite
def modules(draw, exclude: frozenset = frozenset()) -> GenModule:
    """Modules with every feature of the module docstring but those in ``exclude``
    (names from ``FEATURES``: to look for failures that a more common one hides)."""
    assert set(exclude) <= set(FEATURES), exclude
    n_fn = draw(st.integers(1, 9))
    n_gv = draw(st.integers(0, 6))
    names = draw(_names(n_fn + n_gv, exclude))
    fnames, gnames = names[:n_fn], names[n_fn:]
    escape_all = draw(st.booleans())

    functions = []
    for name in fnames:
        kind = draw(st.sampled_from(["kernel", "kernel", "external", "helper", "helper", "helper", "decl"]))
        if kind == "kernel":
            f = Fn(name, kind, KERNEL_SIG, linkage=draw(st.sampled_from(["", "weak_odr"])),
                   module_id=draw(st.one_of(st.none(), st.sampled_from(MODULE_IDS))))
        elif kind == "external":
            f = Fn(name, kind, draw(st.sampled_from(SIGS)), linkage=draw(st.sampled_from(["", "weak_odr"])),
                   module_id=draw(st.sampled_from(MODULE_IDS)))
        elif kind == "helper":
            linkage = draw(st.sampled_from(["internal", "linkonce_odr", "", "weak_odr", "private"]))
            f = Fn(name, kind, draw(st.sampled_from(SIGS)), linkage=linkage,
                   comdat=linkage == "linkonce_odr" and "comdat" not in exclude and draw(st.booleans()),
                   hidden=linkage not in ("internal", "private") and draw(st.booleans()),
                   referenced_indirectly="referenced-indirectly" not in exclude and draw(st.integers(0, 3)) == 0)
        else:
            f = Fn(name, kind, draw(st.sampled_from(SIGS)))
        f.noinline = draw(st.booleans())
        if "notes" not in exclude and draw(st.integers(0, 5)) == 0:
            f.note = draw(st.sampled_from(['x = #1 @k', 'ptr @"f" = !{', 'a\\b "q"']))
        functions.append(f)
    callable_ = [f.name for f in functions if f.kind != "kernel"]

    globals_ = []
    for name in gnames:
        kinds = ["plain", "string", "extern", "gptr"] + ([] if "device-globals" in exclude else ["dg", "dg"]) + (["fptr", "vtable"] if callable_ else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "plain":
            g = Gv(name, kind, draw(st.sampled_from(["internal", "", "linkonce_odr", "private", "weak"])),
                   addrspace=draw(st.sampled_from([0, 1])))
        elif kind == "string":
            g = Gv(name, kind, draw(st.sampled_from(["private", "internal", "linkonce_odr"])),
                   content="".join(draw(st.lists(st.sampled_from(
                       ['@k', '" = ', '#0', '!{', '\\', 'ptr @x', 'define ', '\n', 'é', '}', 'c"']), max_size=4))))
            g.comdat = g.linkage == "linkonce_odr" and "comdat" not in exclude and draw(st.booleans())
        elif kind == "dg":
            g = Gv(name, kind, draw(st.sampled_from(["", "internal"])), addrspace=1,
                   uid=draw(st.sampled_from(["uid0 = #1", 'u"q"', "é\\x"])) + str(len(globals_)))
        elif kind == "extern":
            g = Gv(name, kind, addrspace=draw(st.sampled_from([0, 1])))
        elif kind == "gptr":
            g = Gv(name, kind, draw(st.sampled_from(["internal", "", "linkonce_odr"])))
        elif kind == "fptr":
            g = Gv(name, kind, draw(st.sampled_from(["internal", "", "linkonce_odr"])),
                   targets=[draw(st.sampled_from(callable_))])
        else:
            g = Gv(name, kind, draw(st.sampled_from(["linkonce_odr", "internal", "private"])),
                   targets=draw(st.lists(st.sampled_from(callable_), min_size=1, max_size=3)))
            g.comdat = g.linkage == "linkonce_odr" and "comdat" not in exclude and draw(st.booleans())
        globals_.append(g)
    for g in globals_:
        if g.kind == "gptr":
            g.targets = [draw(st.sampled_from([x.name for x in globals_]))]

    metadata = "metadata" not in exclude
    m = GenModule(functions, globals_, [], [], metadata and draw(st.booleans()),
                  "debug" not in exclude and draw(st.booleans()), escape_all, draw(st.integers(0, 4)) == 0,
                  callees_md=metadata)
    loadable = [g.name for g in globals_ if g.kind in ("plain", "dg", "extern")]
    fps = [g.name for g in globals_ if g.kind == "fptr"]
    vts = [g.name for g in globals_ if g.kind == "vtable"]
    for i, f in enumerate(functions):
        if not f.defined:
            continue
        later = [x.name for x in functions[i + 1:] if x.kind != "kernel"]     # acyclic: no recursion
        choices = [st.tuples(st.just("icall_any"), st.sampled_from(SIGS), st.booleans())]
        if later:
            choices.append(st.tuples(st.just("call"), st.sampled_from(later)))
        if loadable:
            choices.append(st.tuples(st.just("load"), st.sampled_from(loadable)))
        if callable_ or globals_:
            choices.append(st.tuples(st.just("addr"), st.sampled_from(callable_ + [g.name for g in globals_])))
        if fps:
            choices.append(st.tuples(st.just("icall_fp"), st.sampled_from(fps), st.booleans()))
        for vt in vts:
            choices.append(st.tuples(st.just("icall_vt"), st.just(vt),
                                     st.integers(0, len(m.gv(vt).targets) - 1), st.booleans()))
        f.ops = draw(st.lists(st.one_of(*choices), max_size=4))
        if metadata and draw(st.integers(0, 4)) == 0:
            f.attachment = draw(st.sampled_from(fnames + gnames))
    dgs = [g.name for g in globals_ if g.kind == "dg"]
    others = [g.name for g in globals_ if g.kind in ("plain", "string")] + \
             [f.name for f in functions if f.kind == "helper"]
    if "compiler-used" not in exclude:
        m.used = draw(st.lists(st.sampled_from(dgs), unique=True)) if dgs else []
        if others and draw(st.integers(0, 3)) == 0:
            m.used.append(draw(st.sampled_from(others)))
        kernels = [f.name for f in functions if f.kind == "kernel" and f.defined]
        if draw(st.integers(0, 3)) == 0:
            m.llvm_used = draw(st.lists(st.sampled_from(kernels + others + dgs), unique=True, max_size=4)) \
                if kernels + others + dgs else []
    if metadata and draw(st.booleans()):
        m.named = draw(st.lists(st.sampled_from(fnames + gnames), max_size=3, unique=True))
    return m
