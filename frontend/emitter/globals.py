"""Module-level IR: function declarations with their attributes and metadata,
vtables, device globals, string constants, intrinsics, source-location
metadata and the module's named metadata."""
from __future__ import annotations

from ...device_configs.aspects import Aspect, TYPES_THAT_USE_ASPECTS
from ..ir_attributes import render
from ..ir_writer import (HALF, NULL, PTR, Function, GlobalVariable, Value, array_type, const, const_aggregate,
                         const_bytes, struct_type)
from ..data_layout import sizeof
from ...passes.support.signature import Param
from ..symbols import DeviceGlobalSym, FuncSym
from .context import Part, i32
from ...passes.support.ir_contract import (ASPECT_USES, CALLS_INDIRECTLY, DEVICE_GLOBAL_SIZE, DEVICE_IMAGE_SCOPE,
                                           HOST_ACCESS, HOST_ONLY, IMPLEMENT_IN_CSR, INDIRECTLY_CALLABLE, INIT_MODE,
                                           INTEL_REQD_SUB_GROUP_SIZE, REQD_WORK_GROUP_SIZE, SIGNATURE_ATTRIBUTE,
                                           SOURCE_NAME, SRCLOC, SYCL_ASPECTS, SYCL_DECLARED_ASPECTS, SYCL_MODULE_ID,
                                           SYCL_TYPES_THAT_USE_ASPECTS, UNDEFINED, UNIQUE_ID)


class Globals(Part):
    uses = {"llvm_types": ("const_value", "lltype", "valtype")}

    def module_metadata(self):
        m = self.cx.module
        m.named_metadata[SYCL_ASPECTS] = [m.metadata([a.name, i32(int(a))]) for a in Aspect]
        if self.prog.uses_half:
            m.named_metadata[SYCL_TYPES_THAT_USE_ASPECTS] = [
                m.metadata([name, i32(int(a))]) for name, a in TYPES_THAT_USE_ASPECTS.items()]
        used = [gv for g, gv in self.dgs.items() if not g.is_extern]
        if used:
            arr = array_type(PTR, len(used))
            gv = m.add(GlobalVariable("llvm.compiler.used", arr))
            gv.linkage = "appending"
            gv.section = "llvm.metadata"
            gv.initializer = const_aggregate(arr, used)
    def declare_fn(self, f: FuncSym):
        params = [self.lltype(t) for _, t in f.params]
        names = [n for n, _ in f.params]
        if f.cls is not None:
            params.insert(0, PTR)
            names.insert(0, "this")
        fn = self.cx.module.add(Function(f.llname, self.lltype(f.ret), params, arg_names=names))
        fn.cconv = "spir_kernel" if f.is_kernel else "spir_func"
        if f.is_static:
            fn.linkage = "internal"
        elif f.cls is not None and f.defined:
            fn.linkage = "linkonce_odr"
        fn.attributes.extend(self.function_attributes(f))
        if f.device_has is not None:
            fn.metadata[SYCL_DECLARED_ASPECTS] = self.cx.module.metadata([i32(int(a)) for a in sorted(f.device_has)])
        if f.reqd_wg:
            fn.metadata[REQD_WORK_GROUP_SIZE] = self.cx.module.metadata([i32(v) for v in f.reqd_wg])
        if f.reqd_sg:
            fn.metadata[INTEL_REQD_SUB_GROUP_SIZE] = self.cx.module.metadata([i32(f.reqd_sg)])
        if f.defined and f.loc is not None:
            fn.metadata[SRCLOC] = self.loc_md(f.loc)
        fn.metadata.update(self.source_facts(f))
        self.fns[f] = fn
        return fn
    def function_attributes(self, f: FuncSym) -> list:
        """The string attributes of ``f`` (``emitter/__init__.py`` lists them)."""
        attrs = []
        if f.is_kernel or f.is_external or f.set_name is not None:
            attrs.append(render(SYCL_MODULE_ID, f.module_id))
        if f.set_name is not None:
            attrs.append(render(INDIRECTLY_CALLABLE, f.set_name))
        if f.calls_sets:
            attrs.append(render(CALLS_INDIRECTLY, ",".join(f.calls_sets)))
        if f.is_kernel:
            attrs.append(render(SIGNATURE_ATTRIBUTE, kernel_signature_text(f)))
        if f.is_host:
            attrs.append(render(HOST_ONLY, "declared"))
        elif f.is_virtual and f.set_name is None:
            # not indirectly_callable: host code; device vtables get a stub (passes/host_only_virtuals.py)
            attrs.append(render(HOST_ONLY, "virtual"))
        if not f.defined and not f.is_external:
            attrs.append(render(UNDEFINED))
        return attrs

    def source_facts(self, f: FuncSym) -> dict[str, str]:
        """The attachments that let the device-code checks (IR passes) speak the
        source's language, for ``f`` and the helpers made from its blocks:
        ``!minisycl.name !{!"Shape::area"}`` where the IR name differs, and
        ``!minisycl.aspect_uses !{i32 aspect, !"file", i32 line, i32 col, !"what", ...}``,
        the first use of each aspect outside ``if_host`` code with its reason."""
        out = {}
        if f.display != f.llname:
            out[SOURCE_NAME] = self.cx.module.metadata([f.display])
        uses = []
        for (aspect, region), (loc, what) in f.aspects.items():
            if region != "host":
                uses += [i32(int(aspect)), loc.file, i32(loc.line), i32(loc.col), what]
        if uses:
            out[ASPECT_USES] = self.cx.module.metadata(uses)
        return out
    def vtable(self, cls):
        arr = array_type(PTR, len(cls.vslots) + 2)
        ty = struct_type([arr])
        gv = self.cx.module.add(GlobalVariable(f"_ZTV{cls.mangled}", ty))
        gv.constant = True
        gv.linkage = "linkonce_odr"
        gv.unnamed_addr = True
        gv.align = 8
        gv.initializer = const_aggregate(ty, [const_aggregate(arr, [NULL, NULL] + [self.fns[s] for s in cls.vslots])])
        # the address point: past offset-to-top and RTTI, as the Itanium ABI puts it
        self.vtables[cls] = Value(PTR, f"getelementptr inbounds ({ty.text}, ptr {gv.ref}, i32 0, i32 0, i32 2)")
    def declare_dg(self, g: DeviceGlobalSym):
        inner = self.lltype(g.ty)
        ty = struct_type([inner] if g.image_scope else [PTR, inner])
        gv = self.cx.module.add(GlobalVariable(g.llname, ty))
        gv.align = 8
        if g.is_static:
            gv.linkage = "internal"
        elif g.is_inline:
            gv.linkage = "linkonce_odr"     # an inline variable: one definition per file, merged by the linker
        attrs = gv.attributes
        attrs.append(render(UNIQUE_ID, g.unique_id))
        attrs.append(render(DEVICE_GLOBAL_SIZE, str(sizeof(g.ty))))
        if g.image_scope:
            attrs.append(render(DEVICE_IMAGE_SCOPE))
        if g.host_access is not None:
            attrs.append(render(HOST_ACCESS, str(g.host_access)))
        if g.init_mode is not None:
            attrs.append(render(INIT_MODE, str(g.init_mode)))
        if g.implement_in_csr is not None:
            attrs.append(render(IMPLEMENT_IN_CSR, "true" if g.implement_in_csr else "false"))
        self.dgs[g] = gv
    def define_dg(self, g: DeviceGlobalSym):
        """The initialiser of a declared device global: ``T``'s initial value,
        vtable pointers included (so after the vtables are made)."""
        if g.is_extern:
            return
        gv = self.dgs[g]
        value = self.const_value(g.ty, g.init)
        gv.initializer = const_aggregate(gv.value_type, [value] if g.image_scope else [NULL, value])
    def constant_addr(self, c):
        """The address of named constant ``c`` of class or array type: an internal
        constant global holding its value, made when code first uses it."""
        gv = self.cx.constants.get(c)
        if gv is None:
            value = self.const_value(c.ty, c.value)
            gv = self.cx.module.add(GlobalVariable(c.name, value.type))
            gv.constant = True
            gv.linkage = "internal"
            gv.align = 8
            gv.initializer = value
            self.cx.constants[c] = gv
        return gv
    def define_spec_id(self, s):
        """``specialization_id<T> name{default}``: a constant ``{ T }`` holding the
        default (``half`` as itself, as the read returns it), as DPC++ emits the object."""
        inner = self.valtype(s.ty)
        ty = struct_type([inner])
        gv = self.cx.module.add(GlobalVariable(s.llname, ty))
        gv.constant = True
        gv.align = 8
        if s.is_static:
            gv.linkage = "internal"
        value = const(HALF, s.init or 0.0) if inner is HALF else self.const_value(s.ty, s.init)
        gv.initializer = const_aggregate(ty, [value])
        self.cx.spec_ids[s] = gv

    def loc_md(self, loc) -> str:
        """``!{!"file", i32 line, i32 col}`` (clang's ``!srcloc`` idea), with
        ``i32 length`` after when the construct is longer than one character, so
        that IR passes can report diagnostics at the source as the checker would."""
        items = [loc.file, i32(loc.line), i32(loc.col)]
        if loc.length != 1:
            items.append(i32(loc.length))
        return self.cx.module.metadata(items)
    def at(self, loc) -> str:
        """The ``!minisycl.loc`` attachment of an instruction made for ``loc``."""
        return f", !{SRCLOC} " + self.loc_md(loc) if loc is not None else ""
    def cstring(self, text):
        gv = self.strings.get(text)
        if gv is None:
            init = const_bytes(text.encode() + b"\0")
            gv = self.cx.module.add(GlobalVariable(f".str.{len(self.strings)}", init.type))
            gv.constant = True
            gv.linkage = "private"
            gv.unnamed_addr = True
            gv.initializer = init
            self.strings[text] = gv
        return gv
    def intrinsic(self, name, ret, params):
        fn = self.intrinsics.get(name)
        if fn is None:
            fn = self.intrinsics[name] = self.cx.module.add(Function(name, ret, params))
        return fn


def kernel_signature_text(f: FuncSym) -> str:
    """The ``"minisycl-kernel-signature"`` of kernel ``f`` (``passes/support/signature.py``'s
    text form: a struct by value is spelled with its size, which the build checks against
    the IR and the runtime packs by)."""
    return ",".join(Param("struct", t.name, size=sizeof(t)).text if t.is_class else str(t) for _, t in f.params)

