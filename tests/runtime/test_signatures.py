"""Issue 27 point 1: one kernel signature drives the native boundary.

A generator draws kernel signatures from every parameter kind the language
allows (scalars of each type, pointers to scalars, structs, pointers and
``void``, ``local T*``, structs by value, ``id<N>`` / ``nd_item<N>``,
``reducer<T, op>``) and, for kernels written as LLVM IR, from every kind the IR
can pass (``iN``, ``half``, ``float``, ``double``, pointers in address spaces
0-4, named structs by value).  Each kernel is built, written as a bundle
file, loaded, shown by ``inspect``, and launched with arguments that match its
signature; the kernel writes back what it received, so a value packed into the
wrong slot or read as the wrong type fails the test.  The same launch with one
argument too few, or one of the wrong kind, is ``errc::invalid``.

Every run draws ``SIGNATURE_EXAMPLES`` signatures of each kind (derandomized);
``MINISYCL_FUZZ_EXAMPLES=N`` draws N (a long run: ``N=500``).
"""
import os
import struct

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

import minisycl.runtime as sycl
from minisycl.passes.support import knobs
from minisycl.passes.support.cli import main
from minisycl.passes.support.diagnostics import UserError
from minisycl.passes.support.signature import SignatureError, parse
from minisycl.postlink.build import build
from minisycl.postlink.bundle import Bundle
from minisycl.postlink.inspect import read_any, render_any

SIGNATURE_EXAMPLES = knobs.fuzz_examples(12)
SETTINGS = settings(max_examples=SIGNATURE_EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: scalar -> (NumPy type, values strategy)
SCALARS = {
    "bool": (np.bool_, st.booleans()),
    "char": (np.int8, st.integers(-128, 127)), "uchar": (np.uint8, st.integers(0, 255)),
    "short": (np.int16, st.integers(-2**15, 2**15 - 1)), "ushort": (np.uint16, st.integers(0, 2**16 - 1)),
    "int": (np.int32, st.integers(-2**31, 2**31 - 1)), "uint": (np.uint32, st.integers(0, 2**32 - 1)),
    "long": (np.int64, st.integers(-2**63, 2**63 - 1)), "ulong": (np.uint64, st.integers(0, 2**64 - 1)),
    "half": (np.float16, st.floats(width=16, allow_nan=False, allow_infinity=False)),
    "float": (np.float32, st.floats(width=32, allow_nan=False, allow_infinity=False)),
    "double": (np.float64, st.floats(allow_nan=False, allow_infinity=False)),
}

#: struct name -> (definition, fields (name, NumPy type, count), the expression summing them)
STRUCTS = {
    "Pair": ("struct Pair { int a; float b; double c; };", [("a", np.int32, 1), ("b", np.float32, 1),
                                                             ("c", np.float64, 1)], "(double)s.a + (double)s.b * 2.0 + s.c * 4.0"),
    "Byte": ("struct Byte { char c; };", [("c", np.int8, 1)], "(double)s.c"),
    "Wide": ("struct Wide { long x[3]; short y; };", [("x", np.int64, 3), ("y", np.int16, 1)],
             "(double)s.x[0] + (double)s.x[2] * 2.0 + (double)s.y * 4.0"),
}

_INTEGER_OPS = ["plus", "multiplies", "minimum", "maximum", "bit_and", "bit_or", "bit_xor"]
_FLOAT_OPS = ["plus", "multiplies", "minimum", "maximum"]
REDUCER_TYPES = {"int": _INTEGER_OPS, "uint": _INTEGER_OPS, "long": _INTEGER_OPS, "float": _FLOAT_OPS,
                 "double": _FLOAT_OPS, "bool": ["logical_and", "logical_or"]}


def _dtype(name: str) -> np.dtype:
    fields = STRUCTS[name][1]
    offsets, at = [], 0
    for _, t, n in fields:
        a = np.dtype(t).itemsize
        at = (at + a - 1) // a * a
        offsets.append(at)
        at += a * n
    align = max(np.dtype(t).itemsize for _, t, _ in fields)
    return np.dtype({"names": [f for f, _, _ in fields],
                     "formats": [t if n == 1 else (t, (n,)) for _, t, n in fields],
                     "offsets": offsets, "itemsize": (at + align - 1) // align * align})


# -- .ksl kernels ------------------------------------------------------------------------------

@st.composite
def ksl_params(draw):
    """(item or None, [(kind, detail)]) of one kernel, the output pointer among them."""
    item = draw(st.sampled_from([None, "id<1>", "id<2>", "id<3>", "nd_item<1>", "nd_item<2>"]))
    kinds = ["scalar", "pointer", "struct_pointer", "void_pointer", "pointer_pointer", "struct"]
    if item is not None:
        kinds.append("reducer")
    if item is not None and item.startswith("nd_item"):
        kinds.append("local")
    params = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(kinds))
        if kind in ("scalar", "pointer", "local"):
            params.append((kind, draw(st.sampled_from(sorted(SCALARS)))))
        elif kind in ("struct", "struct_pointer"):
            params.append((kind, draw(st.sampled_from(sorted(STRUCTS)))))
        elif kind == "reducer":
            t = draw(st.sampled_from(sorted(REDUCER_TYPES)))
            params.append((kind, (t, draw(st.sampled_from(REDUCER_TYPES[t])))))
        else:
            params.append((kind, None))
    params.insert(draw(st.integers(0, len(params))), ("out", None))
    return item, params


def ksl_source(item, params) -> tuple[str, str]:
    """(the source of kernel ``k``, its signature as the front end spells it)."""
    decls, body, types = [], [], []
    if item:
        decls.append(f"{item} it")
        types.append(item)
    j = 0
    for i, (kind, detail) in enumerate(params):
        p = f"p{i}"
        if kind == "out":
            decls.append(f"double* {p}")
            types.append("double*")
            continue
        if kind == "scalar":
            decls.append(f"{detail} {p}"), types.append(detail)
            body.append(f"out[{j}] = (double){p};")
        elif kind == "pointer":
            decls.append(f"{detail}* {p}"), types.append(f"{detail}*")
            body.append(f"out[{j}] = (double){p}[0];")
        elif kind == "local":
            decls.append(f"local {detail}* {p}"), types.append(f"local {detail}*")
            body.append(f"{p}[0] = ({detail})1; out[{j}] = (double){p}[0];")
        elif kind == "struct":
            decls.append(f"{detail} {p}")
            types.append(None)          # spelled with its size: checked through parse below
            body.append(f"{{ {detail} s = {p}; out[{j}] = {STRUCTS[detail][2]}; }}")
        elif kind == "struct_pointer":
            decls.append(f"{detail}* {p}"), types.append(f"{detail}*")
            body.append(f"out[{j}] = (double)(long){p};")
        elif kind == "void_pointer":
            decls.append(f"void* {p}"), types.append("void*")
            body.append(f"out[{j}] = (double)(long){p};")
        elif kind == "pointer_pointer":
            decls.append(f"int** {p}"), types.append("int**")
            body.append(f"out[{j}] = (double)(long){p};")
        elif kind == "reducer":
            decls.append(f"reducer<{detail[0]}, {detail[1]}> {p}"), types.append(f"reducer<{detail[0]}, {detail[1]}>")
            body.append(f"out[{j}] = 1.0;")
        j += 1
    out = f"p{next(i for i, (kind, _) in enumerate(params) if kind == 'out')}"
    structs = "\n".join(STRUCTS[name][0] for name in sorted(STRUCTS))
    body = [line.replace("out[", f"{out}[") for line in body]
    return f"{structs}\nkernel k({', '.join(decls)}) {{\n  " + "\n  ".join(body) + "\n}\n", types


def _launch_range(item):
    if item is None:
        return None
    n = int(item[-2])
    ones = sycl.range(*([1] * n))
    return sycl.nd_range(ones, ones) if item.startswith("nd_item") else ones


def _ksl_arguments(draw, q, params):
    """(arguments, what ``out`` must hold afterwards, out, reductions to check)."""
    args, want, keep, reductions = [], [], [], []
    out = sycl.malloc_shared(max(len(params), 1), np.float64, q)
    for kind, detail in params:
        if kind == "out":
            args.append(out)
            continue
        if kind == "scalar":
            t, values = SCALARS[detail]
            v = draw(values)
            args.append(v)
            want.append(float(t(v)) if detail != "bool" else float(v))
        elif kind == "pointer":
            t, values = SCALARS[detail]
            mem = sycl.malloc_shared(1, t, q)
            v = draw(values)
            np.asarray(mem)[0] = v
            args.append(mem), keep.append(mem)
            want.append(float(t(v)))
        elif kind == "local":
            args.append(sycl.local_memory(draw(st.integers(1, 8)), SCALARS[detail][0]))
            want.append(1.0)
        elif kind == "struct":
            dt = _dtype(detail)
            value = np.zeros((), dt)
            for name, t, n in STRUCTS[detail][1]:
                value[name] = draw(st.lists(st.integers(-100, 100), min_size=n, max_size=n)) if n > 1 \
                    else draw(st.integers(-100, 100))
            args.append(value if draw(st.booleans()) else value.tobytes())
            s = value
            f = {name: (s[name].tolist()) for name, _, _ in STRUCTS[detail][1]}
            want.append({"Pair": lambda: f["a"] + f["b"] * 2.0 + f["c"] * 4.0, "Byte": lambda: float(f["c"]),
                         "Wide": lambda: f["x"][0] + f["x"][2] * 2.0 + f["y"] * 4.0}[detail]())
        elif kind in ("struct_pointer", "void_pointer", "pointer_pointer"):
            mem = sycl.malloc_shared(4, np.int64, q)
            args.append(mem), keep.append(mem)
            want.append(float(mem.ptr))
        elif kind == "reducer":
            t = np.dtype(SCALARS[detail[0]][0])
            mem = sycl.malloc_shared(1, t, q)
            np.asarray(mem)[0] = 1
            args.append(sycl.reduction(mem, getattr(sycl, detail[1])))
            keep.append(mem), reductions.append((mem, t.type(1)))
            want.append(1.0)
    return args, want, out, reductions, keep


def _wrong(draw, params, args):
    """The same arguments with one of the wrong kind, or None when there is none to swap."""
    if not args:
        return None
    i = draw(st.integers(0, len(args) - 1))
    kind, detail = params[i]
    bad = list(args)
    if kind == "scalar":
        bad[i] = "text"
    elif kind == "struct":
        bad[i] = b"\0" * 3
    elif kind == "local":
        bad[i] = 4
    elif kind == "reducer":
        bad[i] = 1.5
    else:
        bad[i] = 2.5            # a pointer given a float
    return bad


def _round_trip(tmp_path, sources, name="k"):
    """Build, write, load and inspect: (the program, the signature text in the bundle)."""
    bundle, _ = build(sources)
    path = str(tmp_path / "out.bundle")
    with open(path, "wb") as fh:
        fh.write(bundle.to_bytes())
    info = read_any(path)
    text = render_any(path, info)
    sig = info["kernels"][name]
    assert parse(sig).text == sig
    assert f"  {name}({', '.join(p.text for p in parse(sig).params)})" in text
    prog = sycl.load_bundle(path)
    assert prog.kernel(name).signature == parse(sig)
    return prog, sig


@SETTINGS
@given(ksl_params(), st.data())
def test_ksl_signatures_round_trip_and_launch(tmp_path_factory, kernel, data):
    item, params = kernel
    tmp_path = tmp_path_factory.mktemp("ksl")
    source, types = ksl_source(item, params)
    (tmp_path / "k.ksl").write_text(source)
    prog, sig = _round_trip(tmp_path, [str(tmp_path / "k.ksl")])
    got = parse(sig)
    assert [p.text if t is not None else t for p, t in zip(got.params, types)] == types
    assert [p.kind == "struct" for p, t in zip(got.params, types)] == [t is None for t in types]
    q = sycl.queue()
    args, want, out, reductions, _keep = _ksl_arguments(data.draw, q, params)
    k = prog.kernel("k")
    r = _launch_range(item)
    launch = (lambda *a: q.single_task(k, *a)) if r is None else (lambda *a: q.parallel_for(k, r, *a))
    launch(*args).wait()
    assert np.asarray(out)[:len(want)].tolist() == want
    for mem, value in reductions:
        assert np.asarray(mem)[0] == value
    with pytest.raises(sycl.exception) as err:
        launch(*args[:-1])
    assert err.value.code() == sycl.errc.invalid
    bad = _wrong(data.draw, params, args)
    if bad is not None:
        with pytest.raises(sycl.exception) as err:
            launch(*bad)
        assert err.value.code() == sycl.errc.invalid


# -- kernels from LLVM IR --------------------------------------------------------------------------

#: IR scalar -> (signature spelling, NumPy type, values)
IR_SCALARS = {"i1": ("i1", np.uint8, st.integers(0, 1)), "i8": ("i8", np.uint8, st.integers(-128, 255)),
              "i16": ("i16", np.uint16, st.integers(-2**15, 2**16 - 1)),
              "i32": ("i32", np.uint32, st.integers(-2**31, 2**32 - 1)),
              "i64": ("i64", np.uint64, st.integers(-2**63, 2**64 - 1)),
              "half": ("half", np.float16, st.floats(width=16, allow_nan=False)),
              "float": ("float", np.float32, st.floats(width=32, allow_nan=False)),
              "double": ("double", np.float64, st.floats(allow_nan=False))}
IR_FIELDS = ["i8", "i16", "i32", "i64", "float", "double"]
_FIELD_BYTES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "float": 4, "double": 8}


@st.composite
def ir_kernels(draw):
    """(first parameter: None or (id or nd_item, N), [(IR type, detail)], struct field lists)."""
    item = draw(st.sampled_from([None, ("id", 1), ("id", 2), ("id", 3), ("nd_item", 1), ("nd_item", 2),
                                 ("nd_item", 3)]))
    params, structs = [], []
    kinds = ["scalar", "scalar", "pointer", "struct"] + (["local"] if item and item[0] == "nd_item" else [])
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(kinds))
        if kind == "local":
            params.append(("local", draw(st.integers(-2**63, 2**63 - 1))))
            continue
        if kind == "scalar":
            params.append(("scalar", draw(st.sampled_from(sorted(IR_SCALARS)))))
        elif kind == "pointer":
            params.append(("pointer", draw(st.sampled_from([0, 1, 2, 4]))))
        else:
            fields = draw(st.lists(st.sampled_from(IR_FIELDS), min_size=1, max_size=5))
            packed = draw(st.booleans())
            structs.append((fields, packed))
            params.append(("struct", len(structs) - 1))
    return item, params, structs


def _layout(fields, packed):
    at, align = 0, 1
    for f in fields:
        a = 1 if packed else _FIELD_BYTES[f]
        at = (at + a - 1) // a * a + _FIELD_BYTES[f]
        align = max(align, a)
    return (at + align - 1) // align * align


def ir_source(item, params, structs) -> str:
    """A kernel ``k`` that stores each parameter into 64-byte slot j of its output (the first parameter after the item)."""
    lines = ['target triple = "spir64-unknown-unknown"']
    for s, (fields, packed) in enumerate(structs):
        body = ", ".join(fields)
        lines.append(f"%struct.S{s} = type {'<{ ' + body + ' }>' if packed else '{ ' + body + ' }'}")
    decl = []
    if item:
        kind, n = item
        fields = ", ".join([f"[{n} x i64]"] * (5 if kind == "nd_item" else 1))
        lines.append(f'%"class.sycl::_V1::{kind}.{n}" = type {{ {fields} }}')
        decl.append(f'%"class.sycl::_V1::{kind}.{n}" %it')
    decl.append("ptr %out")
    body = []
    for j, (kind, detail) in enumerate(params):
        body.append(f"  %a{j} = getelementptr i8, ptr %out, i64 {64 * j}")
        if kind == "local":             # work-group memory: written, read back, stored
            decl.append(f"ptr addrspace(3) noundef %p{j}")
            body += [f"  store i64 {detail}, ptr addrspace(3) %p{j}", f"  %l{j} = load i64, ptr addrspace(3) %p{j}",
                     f"  store i64 %l{j}, ptr %a{j}, align 1"]
            continue
        ty = {"scalar": lambda: detail, "pointer": lambda: "ptr" if detail == 0 else f"ptr addrspace({detail})",
              "struct": lambda: f"%struct.S{detail}"}[kind]()
        decl.append(f"{ty} noundef %p{j}")
        body.append(f"  store {ty} %p{j}, ptr %a{j}, align 1")
    lines.append(f"define spir_kernel void @k({', '.join(decl)}) {{")
    return "\n".join(lines + body + ["  ret void", "}", ""])


def _ir_expected(draw, q, params, structs):
    """(arguments after ``out``, the bytes each slot j must hold, allocations to keep)."""
    args, want, keep = [], [], []
    for kind, detail in params:
        if kind == "scalar":
            name, t, values = IR_SCALARS[detail]
            v = draw(values)
            args.append(v)
            if detail in ("half", "float", "double"):
                want.append(np.array(v, t).tobytes())
            else:
                bits = int(detail[1:])
                want.append(((v & ((1 << bits) - 1)).to_bytes(8, "little"))[:max(bits // 8, 1)])
        elif kind == "pointer":
            mem = sycl.malloc_shared(2, np.int32, q)
            keep.append(mem)
            args.append(mem)
            want.append(struct.pack("<Q", mem.ptr))
        elif kind == "local":
            args.append(sycl.local_memory(draw(st.integers(1, 4)), np.int64))
            want.append(struct.pack("<q", detail))
        else:
            size = _layout(*structs[detail])
            value = bytes(draw(st.lists(st.integers(0, 255), min_size=size, max_size=size)))
            args.append(value)
            fields, packed = structs[detail]
            want.append(value if packed else None)      # padding bytes of a plain struct are not stored
            if not packed:
                at, parts = 0, []
                for f in fields:
                    a = _FIELD_BYTES[f]
                    at = (at + a - 1) // a * a
                    parts.append((at, value[at:at + a]))
                    at += a
                want[-1] = parts
    return args, want, keep


@SETTINGS
@given(ir_kernels(), st.data())
def test_ir_signatures_round_trip_and_launch(tmp_path_factory, kernel, data):
    item, params, structs = kernel
    tmp_path = tmp_path_factory.mktemp("ll")
    (tmp_path / "k.ll").write_text(ir_source(item, params, structs))
    prog, sig = _round_trip(tmp_path, [str(tmp_path / "k.ll")])
    got = parse(sig)
    assert (got.item.text if got.item else None) == (f"{item[0]}<{item[1]}>" if item else None)
    assert len(got.args) == len(params) + 1
    q = sycl.queue()
    out = sycl.malloc_shared(64 * (len(params) + 1), np.uint8, q)
    args, want, _keep = _ir_expected(data.draw, q, params, structs)
    k = prog.kernel("k")
    r = None if item is None else _launch_range(f"{item[0]}<{item[1]}>")
    launch = (lambda *a: q.single_task(k, *a)) if r is None else (lambda *a: q.parallel_for(k, r, *a))
    launch(out, *args).wait()
    got_bytes = np.asarray(out).tobytes()
    for j, w in enumerate(want):
        slot = got_bytes[64 * j:64 * j + 64]
        if isinstance(w, list):
            for at, part in w:
                assert slot[at:at + len(part)] == part, (j, sig)
        else:
            assert slot[:len(w)] == w, (j, sig)
    with pytest.raises(sycl.exception) as err:
        launch(out, *args[:-1]) if args else launch()
    assert err.value.code() == sycl.errc.invalid
    if args:
        i = data.draw(st.integers(0, len(args) - 1))
        bad = list(args)
        bad[i] = {"struct": b"\0" * 999, "local": 8}.get(params[i][0], "text")
        with pytest.raises(sycl.exception) as err:
            launch(out, *bad)
        assert err.value.code() == sycl.errc.invalid


# -- what cannot be represented is refused at build; what disagrees, at launch ---------------------

UNREPRESENTABLE = {
    "vector": ("<4 x float> %v", "which a kernel launch cannot pass"),
    "i128": ("i128 %v", "which a kernel launch cannot pass"),
    "literal struct": ("{ i32, i8 } %v", "which a kernel launch cannot pass"),
    "array by value": ("[2 x i32] %v", "which a kernel launch cannot pass"),
    "byval": ("ptr byval(%struct.S) %v", "is passed 'byval'"),
    "address space 7": ("ptr addrspace(7) %v", "address space 7"),
    "struct aligned 16": ("%struct.A %v", "cannot be passed by value"),
    "work-item not first": ('i32 %a, %"class.sycl::_V1::id.1" %v', "a work-item is only the first parameter"),
    "bad work-item layout": ('%"class.sycl::_V1::id.2" %v', "not { [2 x i64] }"),
    "local without nd_item": ("ptr addrspace(3) %v", "needs a first parameter nd_item<N>"),
}


@pytest.mark.parametrize("case", sorted(UNREPRESENTABLE))
def test_unrepresentable_ir_signature_is_refused_at_build(tmp_path, case):
    params, message = UNREPRESENTABLE[case]
    text = "\n".join(['target triple = "spir64-unknown-unknown"', "%struct.S = type { i32, i64 }",
                      "%struct.O = type opaque", "%struct.A = type { i128 }",
                      '%"class.sycl::_V1::id.1" = type { [1 x i64] }',
                      '%"class.sycl::_V1::id.2" = type { [1 x i64] }',
                      f"define spir_kernel void @k({params}) {{", "  ret void", "}", ""])
    (tmp_path / "k.ll").write_text(text)
    with pytest.raises(UserError) as err:
        build([str(tmp_path / "k.ll")])
    assert "kernel 'k' cannot be launched" in str(err.value) and message in str(err.value)
    r = CliRunner().invoke(main, ["build", str(tmp_path / "k.ll"), "-o", str(tmp_path / "k.bundle")])
    assert r.exit_code == 1 and "cannot be launched" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "k.bundle").exists()


def test_non_void_and_varargs_kernels_are_refused(tmp_path):
    for header, message in (("i32 @k(i32 %a)", "returns i32|void return type"), ("void @k(i32 %a, ...)", "variable number|varargs")):
        (tmp_path / "k.ll").write_text(f"define spir_kernel {header} {{\n  ret {'i32 0' if 'i32 @' in header else 'void'}\n}}\n")
        with pytest.raises(UserError, match=message):
            build([str(tmp_path / "k.ll")])


def test_written_signature_must_agree_with_the_ir(tmp_path):
    """A ``.ll`` kernel that carries the front end's attribute: checked against its code."""
    for sig, message in (("int", "has 1 parameters (int) but its code takes 2"),
                         ("int,float*", None), ("long,float*", "parameter 1 is 'long'"),
                         ("int,global float*", "parameter 2 is 'global float*'"),
                         ("int,reducer<float", "is not a parameter type")):
        (tmp_path / "k.ll").write_text(f'define spir_kernel void @k(i32 %a, ptr %p) "minisycl-kernel-signature"="{sig}" '
                                       "{\n  ret void\n}\n")
        if message is None:
            assert build([str(tmp_path / "k.ll")])[0].kernels == {"k": sig}
            continue
        with pytest.raises(UserError, match="cannot be launched") as err:
            build([str(tmp_path / "k.ll")])
        assert message in str(err.value)


def test_a_bundle_whose_signature_disagrees_with_its_code_is_never_launched(tmp_path):
    """The issue's case: a kernel taking (i32, ptr) recorded as taking nothing.
    A bundle made that way (by hand: the build never writes one) loads, but the
    kernel is refused before its launcher could read past its arguments."""
    (tmp_path / "k.ll").write_text("define spir_kernel void @k(i32 %a, ptr %p) {\n  store i32 %a, ptr %p\n  ret void\n}\n")
    bundle, _ = build([str(tmp_path / "k.ll")])
    assert bundle.kernels == {"k": "i32,void*"}
    bundle.kernels["k"] = ""
    path = tmp_path / "forged.bundle"
    path.write_bytes(bundle.to_bytes())
    prog = sycl.load_bundle(str(path))
    with pytest.raises(sycl.exception) as err:
        sycl.queue().single_task(prog.kernel("k")).wait()
    assert err.value.code() == sycl.errc.invalid and "its code takes 2" in str(err.value)


def test_example_with_a_reducer_round_trips(tmp_path):
    """``examples/tiled_matmul.ksl`` (``reducer<float, plus>``): inspect and load_bundle read its bundle."""
    prog, _ = _round_trip(tmp_path, [os.path.join(ROOT, "examples", "tiled_matmul.ksl")],
                          name=next(iter(build([os.path.join(ROOT, "examples", "tiled_matmul.ksl")])[0].kernels)))
    assert any(p.kind == "reducer" for k in prog.signatures for p in prog.kernel(k).signature.args)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet="idntem_<>123,* loca{}0fsruc[]bvhgpl", max_size=40))
def test_signature_text_parses_or_is_refused_and_round_trips(text):
    try:
        sig = parse(text)
    except SignatureError:
        return
    assert parse(sig.text) == sig
    assert Bundle.from_bytes(Bundle(kernels={"k": sig.text}).to_bytes()).kernels == {"k": sig.text}


# -- a struct by value on the GPU runtime's driver calls ------------------------------------------

def test_struct_by_value_reaches_the_driver_as_its_bytes(monkeypatch, tmp_path):
    """``cuLaunchKernel`` takes a pointer to each argument's bytes: for a struct by
    value, its bytes (after the slots, ``Signature.struct_slots``), on the fast
    path, through ``submit`` and in a CUDA graph's kernel node (the stand-in driver
    ``fake_cuda.py`` reads 8 bytes at each pointer)."""
    import fake_cuda
    fake, dev = fake_cuda.install(monkeypatch)
    seen = []
    fake.kernels["k"] = (5, lambda n, _y, _z, s, p: seen.append((s, p)))
    (tmp_path / "k.ksl").write_text(STRUCTS["Pair"][0] + "\nkernel k(id<1> i, Pair s, int* p) { p[i] = s.a; }\n")
    prog = sycl.build_program([str(tmp_path / "k.ksl")])
    assert prog.kernel("k").signature.text == "id<1>,struct Pair{16},int*"
    q = sycl.queue(dev, in_order=True)
    p = sycl.malloc_shared(4, np.int32, q)
    value = np.zeros((), _dtype("Pair"))
    value["a"], value["b"] = 7, 1.5
    first8 = struct.unpack("<Q", value.tobytes()[:8])[0]
    q.parallel_for(prog.kernel("k"), 4, value, p).wait()                      # the fast path
    q.submit(lambda h: h.parallel_for(prog.kernel("k"), 4, value, p)).wait()   # a command
    g = sycl.command_graph(q)
    g.add(lambda h: h.parallel_for(prog.kernel("k"), 4, value.tobytes(), p))
    q.ext_oneapi_graph(g.finalize()).wait()                                   # a CUDA graph node
    assert seen == [(first8, p.ptr)] * 3


def test_long_signatures_fit_the_header_and_the_longest_is_refused():
    """A kernel of 20,000 pointer parameters (140,000 characters) loads from a bundle
    (the header took at most 65,536 characters per signature); a text past
    ``MAX_TEXT`` is a ``SignatureError``, never a bundle the runtime cannot read."""
    from minisycl.passes.support.signature import MAX_TEXT
    text = ",".join(["float*"] * 20000)
    prog = sycl.program(Bundle.from_bytes(Bundle(kernels={"k": text}).to_bytes()))
    assert len(prog.kernel("k").params) == 20000
    with pytest.raises(SignatureError, match="characters of parameter types"):
        parse("int," * (MAX_TEXT // 4) + "int")


def test_parameter_names_are_not_attributes(tmp_path):
    (tmp_path / "k.ll").write_text('define spir_kernel void @k(i32 %byval, ptr noundef %"sret x") {\n  ret void\n}\n')
    assert build([str(tmp_path / "k.ll")])[0].kernels == {"k": "i32,void*"}
