"""SYCL 2020's kernel bundles (4.11) over minisycl's programs.

A ``kernel_bundle`` holds kernels of one ``program`` for some devices of one
context, in one of three states (``bundle_state``):

* ``input``: specialization constants may be set (``set_specialization_constant``);
* ``object``: compiled (``compile``), not yet runnable;
* ``executable``: linked (``link``, or ``build`` from input), its kernels run:
  ``handler.use_kernel_bundle(b)`` launches a group's kernel from it, with its
  specialization constants folded in.

``compile``, ``link`` and ``build`` return new bundles; ``build`` JIT-compiles
every kernel of the bundle for every device right away (with its values),
so that launches compile nothing.  Errors, as the specification gives them, are
``errc::invalid``: a constant set on a bundle that is not in the input state,
a wrong state for an operation, a constant of the wrong type or size (naming it),
a kernel the bundle does not hold.
"""
from __future__ import annotations

from .device import default_context, default_device
from .errors import errc, exception
from .program import kernel as Kernel, program as Program

__all__ = ["bundle_state", "kernel_id", "kernel_bundle", "get_kernel_bundle", "get_kernel_ids", "compile", "link",
           "build"]


class bundle_state:  # noqa: N801 - SYCL's name
    input = "input"
    object = "object"
    executable = "executable"


class kernel_id:  # noqa: N801
    """The identity of a kernel (``get_kernel_id``): its name."""

    def __init__(self, name: str):
        self._name = name

    def get_name(self) -> str:
        return self._name

    def __eq__(self, other):
        return isinstance(other, kernel_id) and other._name == self._name

    def __hash__(self):
        return hash(("kernel_id", self._name))

    def __repr__(self):
        return f"kernel_id({self._name!r})"


def get_kernel_ids(prog: Program) -> list[kernel_id]:
    """The ids of every kernel of ``prog``, sorted by name."""
    return [kernel_id(n) for n in sorted(prog.signatures)]


class kernel_bundle:  # noqa: N801
    def __init__(self, prog: Program, context, devices: list, state: str, kernels: list[str], values=None):
        self.program, self.context, self.devices, self.state = prog, context, list(devices), state
        self.contexts = (context,)
        self._kernels = list(kernels)
        self._values: dict[str, object] = dict(values or {})

    # -- queries -------------------------------------------------------------------------
    def get_context(self):
        return self.context

    def get_devices(self) -> list:
        return list(self.devices)

    def get_backend(self) -> str:
        return "minisycl"

    def empty(self) -> bool:
        return not self._kernels

    def get_kernel_ids(self) -> list[kernel_id]:
        return [kernel_id(n) for n in self._kernels]

    def has_kernel(self, kid, dev=None) -> bool:
        name = _kernel_name(kid)
        return name in self._kernels and (dev is None or dev in self.devices)

    def contains_specialization_constants(self) -> bool:
        return any(self.program.spec_table(k) is not None for k in self._kernels)

    def native_specialization_constant(self) -> bool:
        """True: the values are folded into the compiled code, not read from a buffer."""
        return self.contains_specialization_constants()

    def has_specialization_constant(self, name: str) -> bool:
        return self._find(name) is not None

    # -- specialization constants ----------------------------------------------------------
    def set_specialization_constant(self, name: str, value) -> None:
        if self.state != bundle_state.input:
            raise exception(errc.invalid, f"set_specialization_constant('{name}') on a kernel bundle in the "
                                          f"{self.state} state (only an input bundle takes values)")
        table, sc = self._find_or_raise(name)
        table.encode(sc, value)                 # checks the type and size now, naming the constant
        self._values[name] = value

    def get_specialization_constant(self, name: str):
        table, sc = self._find_or_raise(name)
        if name in self._values:
            return table.decode(sc, table.encode(sc, self._values[name]))
        return table.decode(sc, table.defaults[sc.offset:sc.offset + sc.size])

    def _find(self, name: str):
        for k in self._kernels:
            table = self.program.spec_table(k)
            sc = table.find(name) if table is not None else None
            if sc is not None:
                return table, sc
        return None

    def _find_or_raise(self, name: str):
        if not isinstance(name, str):
            raise exception(errc.invalid, f"a specialization constant is named by a string, got {type(name).__name__}")
        found = self._find(name)
        if found is None:
            raise exception(errc.invalid, f"no kernel of this bundle reads a specialization constant named '{name}'")
        return found

    # -- kernels -----------------------------------------------------------------------------
    def get_kernel(self, kid) -> Kernel:
        """The kernel (specialised with the bundle's values) of an executable bundle."""
        if self.state != bundle_state.executable:
            raise exception(errc.invalid, f"get_kernel on a kernel bundle in the {self.state} state")
        name = _kernel_name(kid)
        if name not in self._kernels:
            raise exception(errc.invalid, f"the kernel bundle does not hold kernel '{name}'")
        return self._specialized(self.program.kernel(name))

    def kernel_for(self, k: Kernel, dev) -> Kernel:
        """``k`` as a group using this bundle launches it on ``dev``."""
        if k.name not in self._kernels or (k.program is not self.program
                                            and getattr(k.program, "_prog", None) is not self.program):
            raise exception(errc.invalid, f"the kernel bundle does not hold kernel '{k.name}'")
        if dev not in self.devices:
            raise exception(errc.invalid, f"the kernel bundle was not built for device {dev.name}")
        return self._specialized(k)

    def _specialized(self, k: Kernel) -> Kernel:
        values = {n: v for n, v in self._values.items() if self._find(n) is not None}
        return k.specialized(values) if values else k

    def _with_state(self, state: str) -> "kernel_bundle":
        return kernel_bundle(self.program, self.context, self.devices, state, self._kernels, self._values)


def _kernel_name(kid) -> str:
    if isinstance(kid, kernel_id):
        return kid.get_name()
    if isinstance(kid, str):
        return kid
    if isinstance(kid, Kernel):
        return kid.name
    raise exception(errc.invalid, f"a kernel is named by a kernel_id, got {type(kid).__name__}")


def get_kernel_bundle(prog: Program, context=None, devices=None, state: str = bundle_state.executable,
                      kernel_ids=None) -> kernel_bundle:
    """The bundle of ``prog``'s kernels (or those of ``kernel_ids``) for ``devices``
    (default: the context's) in ``state``; an executable one is built now."""
    if not isinstance(prog, Program):
        raise exception(errc.invalid, f"get_kernel_bundle expects a program, got {type(prog).__name__}")
    if state not in (bundle_state.input, bundle_state.object, bundle_state.executable):
        raise exception(errc.invalid, f"unknown bundle state {state!r}")
    if context is None:
        context = default_context(devices[0] if devices else default_device())
    devices = list(devices) if devices is not None else list(context.devices)
    if not devices:
        raise exception(errc.invalid, "get_kernel_bundle: no devices")
    for d in devices:
        if d not in context.devices:
            raise exception(errc.invalid, f"device {d.name} is not in the bundle's context")
    names = sorted(prog.signatures) if kernel_ids is None else [_kernel_name(k) for k in kernel_ids]
    for n in names:
        if n not in prog.signatures:
            raise exception(errc.invalid, f"no kernel named '{n}' in {prog.name}")
    bundle = kernel_bundle(prog, context, devices, bundle_state.input, names)
    if state == bundle_state.input:
        return bundle
    return build(bundle) if state == bundle_state.executable else compile(bundle)


def compile(bundle: kernel_bundle) -> kernel_bundle:  # noqa: A001 - SYCL's name
    """input -> object."""
    _expect(bundle, bundle_state.input, "compile")
    return bundle._with_state(bundle_state.object)


def link(bundles, devices=None) -> kernel_bundle:
    """object bundle(s) of one program and context -> executable (built now)."""
    bundles = [bundles] if isinstance(bundles, kernel_bundle) else list(bundles)
    if not bundles:
        raise exception(errc.invalid, "link: no kernel bundles")
    for b in bundles:
        _expect(b, bundle_state.object, "link")
    first = bundles[0]
    if any(b.program is not first.program or b.context is not first.context for b in bundles):
        raise exception(errc.invalid, "link: the bundles belong to different programs or contexts")
    names = [n for b in bundles for n in b._kernels]
    values = {}
    for b in bundles:
        values.update(b._values)
    out = kernel_bundle(first.program, first.context, devices or first.devices, bundle_state.executable,
                        list(dict.fromkeys(names)), values)
    _build_all(out)
    return out


def build(bundle: kernel_bundle) -> kernel_bundle:
    """input -> executable: every kernel compiled for every device now, with the bundle's values."""
    _expect(bundle, bundle_state.input, "build")
    out = bundle._with_state(bundle_state.executable)
    _build_all(out)
    return out


def _expect(bundle, state: str, what: str) -> None:
    if not isinstance(bundle, kernel_bundle):
        raise exception(errc.invalid, f"{what} expects a kernel_bundle, got {type(bundle).__name__}")
    if bundle.state != state:
        raise exception(errc.invalid, f"{what} needs a kernel bundle in the {state} state, this one is {bundle.state}")


def _build_all(bundle: kernel_bundle) -> None:
    for name in bundle._kernels:
        k = bundle._specialized(bundle.program.kernel(name))
        for d in bundle.devices:
            k.program.linked_for(name, d, bundle.context)
