"""Properties (``[[name(args)]]``) of functions, kernels and device globals:
which apply to what, and what their arguments mean."""
from __future__ import annotations

from ...device_configs.aspects import lookup as lookup_aspect
from ...passes.ir.sycl_names import set_symbol
from ..parser import _int_value
from ..symbols import DeviceGlobalSym
from .context import Part

HOST_ACCESS = {"read": 0, "write": 1, "read_write": 2, "none": 3}
INIT_MODE = {"reprogram": 0, "reset": 1}
PROPERTIES = {
    "function": ("indirectly_callable", "device_has"),
    "kernel": ("calls_indirectly", "device_has", "reqd_work_group_size", "reqd_sub_group_size"),
    "device_global": ("device_image_scope", "host_access", "init_mode", "implement_in_csr"),
}


class Properties(Part):
    def check_props(self, props, kind, entity):
        seen = {}
        allowed = PROPERTIES[kind]
        for p in props:
            if p.name not in allowed:
                known = [n for ks in PROPERTIES.values() for n in ks]
                if p.name in known:
                    self.error(p.loc, f"property '{p.name}' cannot be applied to {entity}")
                else:
                    self.error(p.loc, f"unknown property '{p.name}'; {entity} accepts {', '.join(allowed)}")
                continue
            if p.name in seen:
                self.error(p.loc, f"property '{p.name}' given twice")
                continue
            seen[p.name] = p
        return seen

    def aspect_args(self, p):
        out = []
        if not p.args:
            self.error(p.loc, "device_has needs at least one aspect")
        for kind, value, loc in p.args:
            a = lookup_aspect(value) if kind in ("NAME", "PRIM") else None
            if a is None:
                self.error(loc, f"unknown aspect '{value}'" if kind in ("NAME", "PRIM")
                           else f"device_has takes aspect names, not {value}")
            elif a not in out:
                out.append(a)
        return out

    def set_args(self, p, many):
        if not p.args:
            return [set_symbol(None)]
        if not many and len(p.args) > 1:
            self.error(p.args[1][2], f"{p.name} takes at most one set name")
        out = []
        for kind, value, loc in p.args[: None if many else 1]:
            if kind == "PRIM" and value == "void":          # `void` names the default set
                if set_symbol(None) not in out:
                    out.append(set_symbol(None))
                continue
            if kind != "STRING":
                self.error(loc, f"{p.name} takes set names as string literals, like {p.name}(\"my_set\"), "
                                f"or void for the default set")
                continue
            name = value[1:-1]
            if not name or not (name[0].isalpha() or name[0] == "_") or not all(c.isalnum() or c == "_" for c in name):
                self.error(loc, f"virtual-function set name {value} must be an identifier")
                continue
            s = set_symbol(name)
            if s not in out:
                out.append(s)
        return out

    def apply_function_props(self, node, sym):
        kind = "kernel" if node.is_kernel else "function"
        props = self.check_props(node.props, kind, "a kernel" if node.is_kernel else "a function")
        if "indirectly_callable" in props:
            sets = self.set_args(props["indirectly_callable"], many=False)
            sym.set_name = sets[0] if sets else None
            if sym.cls is None:
                self.error(props["indirectly_callable"].loc, "indirectly_callable can only be applied to virtual methods")
        if "calls_indirectly" in props:
            sym.calls_sets = sorted(self.set_args(props["calls_indirectly"], many=True))
        if "device_has" in props:
            sym.device_has = self.aspect_args(props["device_has"])
        if "reqd_work_group_size" in props:
            p = props["reqd_work_group_size"]
            vals = []
            if not 1 <= len(p.args) <= 3:
                self.error(p.loc, "reqd_work_group_size takes 1 to 3 sizes")
            for kind_, value, loc in p.args:
                n = _int_value(value)[0] if kind_ == "INT" else 0
                if n <= 0:
                    self.error(loc, f"reqd_work_group_size: '{value[:40]}' is not a positive integer")
                elif n >= 2 ** 31:
                    self.error(loc, f"reqd_work_group_size: '{value[:40]}' is too large (at most {2 ** 31 - 1})")
                else:
                    vals.append(n)
            sym.reqd_wg = vals
        if "reqd_sub_group_size" in props:
            sym.reqd_sg = self.sub_group_size(props["reqd_sub_group_size"])

    def sub_group_size(self, p) -> int | None:
        """The one positive size ``reqd_sub_group_size(n)`` takes."""
        n = _int_value(p.args[0][1])[0] if len(p.args) == 1 and p.args[0][0] == "INT" else 0
        if not 0 < n < 2 ** 31:
            self.error(p.args[0][2] if p.args else p.loc, "reqd_sub_group_size takes one positive integer")
            return None
        return n

    def dg_props(self, dcl, g: DeviceGlobalSym):
        props = self.check_props(dcl.props, "device_global", "a device_global")

        if "device_image_scope" in props:
            if props["device_image_scope"].args:
                self.error(props["device_image_scope"].args[0][2], "device_image_scope takes no arguments")
            g.image_scope = True
        if "host_access" in props:
            g.host_access = self.one_name(props["host_access"], HOST_ACCESS)
        if "init_mode" in props:
            g.init_mode = self.one_name(props["init_mode"], INIT_MODE)
        if "implement_in_csr" in props:
            p = props["implement_in_csr"]
            if not p.args:
                g.implement_in_csr = True
            elif len(p.args) == 1 and p.args[0][0] == "BOOL":
                g.implement_in_csr = p.args[0][1] == "true"
            else:
                self.error(p.args[0][2], "implement_in_csr takes true or false")

    def one_name(self, p, table):
        """The value in ``table`` of the single name property ``p`` takes."""
        if len(p.args) != 1 or p.args[0][0] not in ("NAME", "PRIM") or p.args[0][1] not in table:
            self.error(p.args[0][2] if p.args else p.loc,
                       f"{p.name} takes one of: {', '.join(table)}")
            return None
        return table[p.args[0][1]]
