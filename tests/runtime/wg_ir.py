"""Hand-written device IR in the IR contract of ``passes/work_item_loops.py``, for the
work-group tests and benchmarks (the front end's spelling of the same kernels comes later)."""
from __future__ import annotations

HEAD = """target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64"
target triple = "spir64-unknown-unknown"
"""
C = {"i32": "int", "i64": "long", "float": "float", "double": "double", "half": "half", "i8": "char", "i1": "bool"}
MANGLE = {"i32": "i", "i64": "l", "float": "f", "double": "d", "half": "DF16_", "i1": "b", "i8": "c"}


def item(n: int) -> str:
    return f'%"class.sycl::_V1::nd_item.{n}" = type {{ {", ".join([f"[{n} x i64]"] * 5)} }}\n'


def mangled(name: str, codes: str) -> str:
    return f"_Z{len(name)}{name}{codes}"


def collective(kernel: str, builtin: str, ty: str, scope: int | None, op: int | None, extra: str = "",
               dims: int = 1, reqd_sg: int | None = None) -> tuple[str, str]:
    """A kernel ``out[linear gid] = builtin(scope, [op,] x[linear gid] [, extra])``; (definition, declaration)."""
    it = f'%"class.sycl::_V1::nd_item.{dims}"'
    args = (f"i32 {scope}, " if scope is not None else "") + (f"i32 {op}, " if op is not None else "") + \
        f"{ty} %v" + (f", {extra}" if extra else "")
    types = ("i" if scope is not None else "") + ("i" if op is not None else "") + MANGLE[ty] + ("j" if extra else "")
    fn = mangled(builtin, types)
    decl_args = ", ".join(a.rsplit(" ", 1)[0] for a in args.split(", "))
    lin = ["  %g0 = extractvalue {it} %it, 0, 0".format(it=it), "  %lin0 = add i64 %g0, 0"]
    for d in range(1, dims):
        lin += [f"  %gr{d} = extractvalue {it} %it, 3, {d}", f"  %g{d} = extractvalue {it} %it, 0, {d}",
                f"  %m{d} = mul i64 %lin{d - 1}, %gr{d}", f"  %lin{d} = add i64 %m{d}, %g{d}"]
    md = f" !intel_reqd_sub_group_size !{{i32 {reqd_sg}}}" if reqd_sg else ""
    sig = f"nd_item<{dims}>,{C[ty]}*,{C[ty]}*"
    body = "\n".join(lin)
    return (f"""define spir_kernel void @{kernel}({it} %it, ptr %x, ptr %out) "minisycl-kernel-signature"="{sig}"{md} {{
entry:
{body}
  %px = getelementptr {ty}, ptr %x, i64 %lin{dims - 1}
  %v = load {ty}, ptr %px
  %r = call {ty} @{fn}({args})
  %po = getelementptr {ty}, ptr %out, i64 %lin{dims - 1}
  store {ty} %r, ptr %po
  ret void
}}
""", f"declare {ty} @{fn}({decl_args})\n")


def module(kernels: list[tuple[str, str]], dims=(1,)) -> str:
    decls = sorted({d for _, d in kernels})
    return HEAD + "".join(item(n) for n in sorted(set(dims))) + "".join(k for k, _ in kernels) + "".join(decls)
