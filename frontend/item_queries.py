"""The member functions of ``id<N>``, ``range<N>`` and ``nd_item<N>``: one table
the checker (which queries exist, how many arguments) and the emitter (which
fields of the item object they read) both take their facts from.

An item object is ``[N x i64]`` vectors in ``ND_ITEM_FIELDS`` order
(``id``/``range``: one vector).  A query is one of:

* ``field``: the vector ``fields[0]``, at the dimension given as argument;
* ``ratio``: ``fields[0] / fields[1]`` at that dimension (``get_group_range``);
* ``linear``: the row-major linear index of id vector ``fields[0]`` within
  range vector ``fields[1]`` (no argument);
* ``product``: the product of vector ``fields[0]`` over all dimensions (no argument);
* ``sub_group``: a ``uint`` the SPIR-V built-in of ``group_ops.SUB_GROUP_QUERIES``
  gives (no argument; the work-group lowering computes it).
"""
from __future__ import annotations

from typing import NamedTuple

from .data_layout import ND_ITEM_FIELDS
from .group_ops import SUB_GROUP_QUERIES


class ItemQuery(NamedTuple):
    how: str                    # field, ratio, linear, product or sub_group
    fields: tuple[int, ...]     # vector indices into the item object

    @property
    def nargs(self) -> int:
        """How many arguments (the dimension) the query takes."""
        return 1 if self.how in ("field", "ratio") else 0


def _nd(*names: str) -> tuple[int, ...]:
    return tuple(ND_ITEM_FIELDS.index(n) for n in names)


#: item kind -> member function name -> query
ITEM_QUERIES: dict[str, dict[str, ItemQuery]] = {
    "nd_item": {
        "get_global_id": ItemQuery("field", _nd("global_id")),
        "get_id": ItemQuery("field", _nd("global_id")),
        "get_local_id": ItemQuery("field", _nd("local_id")),
        "get_group": ItemQuery("field", _nd("group")),
        "get_global_range": ItemQuery("field", _nd("global_range")),
        "get_range": ItemQuery("field", _nd("global_range")),
        "get_local_range": ItemQuery("field", _nd("local_range")),
        "get_group_range": ItemQuery("ratio", _nd("global_range", "local_range")),
        "get_global_linear_id": ItemQuery("linear", _nd("global_id", "global_range")),
        "get_local_linear_id": ItemQuery("linear", _nd("local_id", "local_range")),
        **{name: ItemQuery("sub_group", ()) for name in SUB_GROUP_QUERIES},
    },
    "id": {"get": ItemQuery("field", (0,))},
    "range": {"get": ItemQuery("field", (0,)), "size": ItemQuery("product", (0,))},
}


def item_query(kind: str, name: str) -> ItemQuery | None:
    """The query ``name`` of an item of ``kind`` (``nd_item``, ``id``, ``range``), or None."""
    return ITEM_QUERIES[kind].get(name)
