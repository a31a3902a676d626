"""Feature-test constants: SYCL's feature-test macros for the extensions this
runtime implements, with the values their specifications define (each spec's
"Feature test macro" table: version 1 of both)."""

__all__ = ["SYCL_EXT_ONEAPI_GRAPH", "SYCL_EXT_ONEAPI_DEVICE_GLOBAL"]

#: ``sycl_ext_oneapi_graph``: 1, the initial version with the base features
SYCL_EXT_ONEAPI_GRAPH = 1
#: ``sycl_ext_oneapi_device_global``: 1, the initial version
SYCL_EXT_ONEAPI_DEVICE_GLOBAL = 1
