"""Virtual methods without ``indirectly_callable``: host code, a stub in device vtables.

The design (DPC++'s virtual-functions design, intel/llvm
sycl/doc/design/VirtualFunctions.md, "Changes to the compiler front-end") says a virtual method that is not ``indirectly_callable``
is not device code and must not be emitted into device code.  The front end
marks such a method (declared ``virtual`` or ``override``, no
``indirectly_callable``) with ``"minisycl-host-only"="virtual"``; the other
values of that attribute are ``"declared"`` (a function declared ``host``) and
none (``print``'s ``printf``).

A vtable names all of its class's methods, so a kernel that constructs an
object reaches every one of them through references.  There is one stream of
IR (host and device code in one module); what makes such a method host code is
what the device side does with it:

  1. The device half (``split-if-device``'s closure, ``device_closure``) does
     not look into the body of a ``"virtual"`` method that only vtables reach:
     what it calls (``print``, host functions) and the types it uses
     (``double``) are not device code, so neither the device-code rules nor
     aspect propagation see them.  A method that device code *calls directly*
     (``s.f()`` on an object, not a virtual call) is device code as any called
     function is, as DPC++ makes every function a kernel calls a device
     function: its body is followed and checked.
  2. In the device module, each vtable slot that names such a method names a
     stub instead (``stub_vtable_slots``): ``__minisycl_host_only_virtual.<name>``,
     a small internal function of the method's type that calls the device
     ``assert`` hook (``void __minisycl_assert_fail(ptr message)``, provided by
     the runtime: ``runtime/assertions.py``) with
     ``called virtual method 'S::f', which is not indirectly_callable and exists
     on the host only`` and returns zero.  The stub carries
     ``"minisycl-host-only-stub"="<method>"``: it stands for host code, so
     ``propagate-aspects`` gives it no aspects (a ``double`` in the method's
     signature makes no kernel need fp64).  The launch then raises
     ``errc::runtime`` with that message, the runtime naming the kernel in
     front of it.  The method itself leaves the device module unless device
     code calls it directly.  Stubs follow the module's function order and
     their names come from the method's, so the output is deterministic.

DPC++ leaves a null pointer in such a slot (calling it is undefined
behaviour); the stub makes the same mistake an error with the method's name.

Where: ``split-if-device`` (step 1 when it cuts the device half, step 2 on that
half after its device-code checks), and the post-link step on a module that
was not split (``postlink/split.py``): device images never hold such a body.
Tests: ``tests/lit/passes/split-if-device/host-only-virtual.ksl``,
``tests/lit/postlink/virtual-functions/host-only-virtual.ll``,
``tests/runtime/test_host_only_virtuals.py``.
"""
from __future__ import annotations

from typing import Iterable

from .ir import Module, quote_name, quote_string
from .ir.sycl_names import ASSERT_FAIL
from .srcloc import display_name
from .support.ir_contract import HOST_ONLY, HOST_ONLY_STUB

__all__ = ["VIRTUAL", "ASSERT_FAIL", "STUB_PREFIX", "host_only_virtuals", "device_closure",
           "stub_vtable_slots", "with_vtable_stubs", "stub_message"]

#: the front end's mark of host code (``"declared"``, ``"virtual"`` or no value)
VIRTUAL = "virtual"
#: a stub's name: this prefix and the method's IR name (it calls the assert hook, ``ASSERT_FAIL``)
STUB_PREFIX = "__minisycl_host_only_virtual."
#: the stubs' attribute (the method's IR name)


def host_only_virtuals(module: Module) -> list[str]:
    """The defined functions marked ``"minisycl-host-only"="virtual"``, in module order."""
    marked = module.functions_with(HOST_ONLY)
    if not marked:
        return []
    return [n for n, v in marked.items() if v == VIRTUAL and not module.functions[n].is_declaration]


def device_closure(module: Module, roots: Iterable[str], skip_bodies_of: Iterable[str] = ()
                   ) -> tuple[list[str], list[str]]:
    """Step 1: (what ``roots`` reach, as ``Module.closure``; the host-only
    virtual methods among them whose bodies were not followed, because nothing
    reached calls them directly).  ``skip_bodies_of`` as ``Module.closure``."""
    roots, skip = list(roots), list(skip_bodies_of)
    virtuals = host_only_virtuals(module)
    if not virtuals:
        return module.closure(roots, skip_bodies_of=skip), []
    skipped_helpers = set(skip)
    called: set[str] = set()
    while True:
        opaque = [v for v in virtuals if v not in called]
        names = module.closure(roots, skip_bodies_of=skip + opaque)
        shut = skipped_helpers | set(opaque)
        more = {c for n in names if n not in shut and n in module.functions
                for c in module.functions[n].calls() if c in virtuals and c not in called}
        if not more:
            reached = set(names)
            return names, [v for v in opaque if v in reached]
        called |= more


def stub_message(module: Module, name: str) -> str:
    """What the stub of method ``name`` reports (the runtime puts the kernel in front)."""
    return (f"called virtual method '{display_name(module, name)}', which is not indirectly_callable and exists "
            f"on the host only")


def stub_vtable_slots(module: Module) -> list[str]:
    """Step 2 on a device module: every vtable slot naming a host-only virtual
    method names its stub; a method nothing calls directly any more is
    dropped (with what only it used).  Returns the stubs added and the
    methods dropped (empty: the module is unchanged)."""
    virtuals = host_only_virtuals(module)
    if not virtuals:
        return []
    users = module.users()
    slots = [v for v in virtuals if any(u in module.globals for u in users.get(v, ()))]
    renames = {v: STUB_PREFIX + v for v in slots}
    lines = [_stub_text(module, v, renames[v]) for v in slots]
    if slots and ASSERT_FAIL not in module.functions:
        lines.append(f"declare void @{ASSERT_FAIL}(ptr)")
    module.add_entities("\n".join(lines) + "\n")
    for v in slots:
        module.set_function_attributes(renames[v], {HOST_ONLY_STUB: v})
    module.rename_refs_in_globals(renames)
    users = module.users()
    dead = [v for v in virtuals if not any(u != v and u in module.functions for u in users.get(v, ()))]
    module.drop(dead)
    return list(renames.values()) + dead


def with_vtable_stubs(module: Module) -> Module:
    """``module`` when it has no host-only virtual method (what ``split-if-device``
    leaves has none, or only ones device code calls); otherwise a copy after
    ``stub_vtable_slots`` (the post-link step on a module that was not split)."""
    if not host_only_virtuals(module):
        return module
    copy = module.copy()
    stub_vtable_slots(copy)
    return copy


def _zero(ty: str) -> str:
    """Zero of type ``ty`` as LLVM prints it."""
    if ty in ("float", "double"):
        return "0.000000e+00"
    if ty in ("half", "bfloat"):
        return "0xH0000" if ty == "half" else "0xR0000"
    if ty[0] == "i" and ty[1:].isdigit():
        return "0"
    if ty.startswith("ptr"):
        return "null"
    return "zeroinitializer"


def _stub_text(module: Module, name: str, stub: str) -> str:
    """The message constant and the stub function of method ``name``."""
    fn = module.functions[name]
    text = stub_message(module, name)
    size = len(text.encode("utf-8", "surrogateescape")) + 1
    msg = quote_name(stub + ".message")
    ret = fn.return_type
    done = "ret void" if ret == "void" else f"ret {ret} {_zero(ret)}"
    return (f"@{msg} = private unnamed_addr constant [{size} x i8] c{quote_string(text)[:-1]}\\00\", align 1\n"
            f"define internal {fn.calling_conv} {ret} @{quote_name(stub)}{fn.params} {{\n"
            f"entry:\n  call void @{ASSERT_FAIL}(ptr @{msg})\n  {done}\n}}\n")
