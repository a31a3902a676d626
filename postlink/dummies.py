"""Dummy images (upstream's ``handleVirtualFunctions`` dummy modules).

Algorithm: a virtual-function image whose IR uses aspects is followed by its
dummy: the same module with the bodies of the set's virtual functions emptied
(``ret void`` / ``ret <ty> undef``), which therefore uses no aspect.  Its
properties are the real image's plus ``dummy-image=1`` in ``[SYCL/virtual
functions]``; the runtime links the dummy where the device lacks the aspects,
so kernels calling the set still link.
"""
from __future__ import annotations

from .image import Image
from ..passes.propagate_aspects import used_aspects
from .propertyset import PropertySets
from ..passes.support.ir_contract import DUMMY_IMAGE_KEY, VIRTUAL_FUNCTIONS

__all__ = ["needs_dummy", "dummy_image"]


def needs_dummy(image: Image, holds_virtual_functions: bool) -> bool:
    """Whether ``image`` (a virtual-function image or not) gets a dummy."""
    return holds_virtual_functions and bool(used_aspects(image.module))


def dummy_image(image: Image, virtual) -> Image:
    """The dummy of a virtual-function image; ``virtual``: the module's
    ``"indirectly-callable"`` functions."""
    part, members, key = image.module, image.entry_points, image.key
    dummy = part.extract([n for n in part.functions if not part.functions[n].is_declaration] + list(part.globals),
                         stub=[n for n in members if n in virtual], name=key + ".dummy")
    dprops = PropertySets()
    for set_name, entries in image.properties.sets.items():
        for k, (_, v) in entries.items():
            dprops.add(set_name, k, v)
    dprops.add(VIRTUAL_FUNCTIONS, DUMMY_IMAGE_KEY, 1)
    return Image(dummy, list(members), key, dprops, dummy=True)
