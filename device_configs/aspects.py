"""The SYCL aspect table: the one source of truth for aspect names and numbers.

Every stage imports it: the front end (``device_has`` arguments, ``!sycl_aspects``),
aspect propagation, post-link property sets, device-config validation and the
runtime's device matcher.  Numbers follow ``sycl/include/sycl/info/aspects.def``
(and the newer generated list above 60); inputs that carry their own
``!sycl_aspects`` metadata are read with their numbers instead (see
``docs/formats.md``, "IR conventions between the stages").
"""
from __future__ import annotations

import enum


class Aspect(enum.IntEnum):
    host = 0                      # deprecated
    cpu = 1
    gpu = 2
    accelerator = 3
    custom = 4
    fp16 = 5
    fp64 = 6
    int64_base_atomics = 7        # deprecated
    int64_extended_atomics = 8    # deprecated
    image = 9
    online_compiler = 10
    online_linker = 11
    queue_profiling = 12
    usm_device_allocations = 13
    usm_host_allocations = 14
    usm_shared_allocations = 15
    usm_restricted_shared_allocations = 16  # deprecated
    usm_system_allocations = 17
    ext_intel_pci_address = 18
    ext_intel_gpu_eu_count = 19
    ext_intel_gpu_eu_simd_width = 20
    ext_intel_gpu_slices = 21
    ext_intel_gpu_subslices_per_slice = 22
    ext_intel_gpu_eu_count_per_subslice = 23
    ext_intel_max_mem_bandwidth = 24
    ext_intel_mem_channel = 25
    usm_atomic_host_allocations = 26
    usm_atomic_shared_allocations = 27
    atomic64 = 28
    ext_intel_device_info_uuid = 29
    ext_oneapi_srgb = 30
    ext_oneapi_native_assert = 31
    host_debuggable = 32
    ext_intel_gpu_hw_threads_per_eu = 33
    ext_oneapi_cuda_async_barrier = 34
    ext_oneapi_bfloat16_math_functions = 35
    ext_intel_free_memory = 36
    ext_intel_device_id = 37
    ext_intel_memory_clock_rate = 38
    ext_intel_memory_bus_width = 39
    emulated = 40
    ext_intel_legacy_image = 41
    ext_oneapi_bindless_images = 42
    ext_oneapi_bindless_images_shared_usm = 43
    ext_oneapi_bindless_images_1d_usm = 44
    ext_oneapi_bindless_images_2d_usm = 45
    ext_oneapi_interop_memory_import = 46
    ext_oneapi_interop_memory_export = 47
    ext_oneapi_interop_semaphore_import = 48
    ext_oneapi_interop_semaphore_export = 49
    ext_oneapi_mipmap = 50
    ext_oneapi_mipmap_anisotropy = 51
    ext_oneapi_mipmap_level_reference = 52
    ext_intel_esimd = 53
    ext_oneapi_ballot_group = 54
    ext_oneapi_fixed_size_group = 55
    ext_oneapi_opportunistic_group = 56
    ext_oneapi_tangle_group = 57
    ext_intel_matrix = 58
    ext_oneapi_is_composite = 59
    ext_oneapi_is_component = 60
    ext_oneapi_graph = 61
    ext_intel_fpga_task_sequence = 62
    ext_oneapi_limited_graph = 63
    ext_oneapi_private_alloca = 64
    ext_oneapi_cubemap = 65
    ext_oneapi_cubemap_seamless_filtering = 66
    ext_oneapi_bindless_sampled_image_fetch_1d_usm = 67
    ext_oneapi_bindless_sampled_image_fetch_1d = 68
    ext_oneapi_bindless_sampled_image_fetch_2d_usm = 69
    ext_oneapi_bindless_sampled_image_fetch_2d = 70
    ext_oneapi_bindless_sampled_image_fetch_3d_usm = 71
    ext_oneapi_bindless_sampled_image_fetch_3d = 72
    ext_oneapi_queue_profiling_tag = 73
    ext_oneapi_virtual_mem = 74
    ext_oneapi_cuda_cluster_group = 75
    ext_oneapi_image_array = 76
    ext_oneapi_unique_addressing_per_dim = 77
    ext_oneapi_bindless_images_sample_1d_usm = 78
    ext_oneapi_bindless_images_sample_2d_usm = 79
    ext_oneapi_atomic16 = 80
    ext_oneapi_virtual_functions = 81


#: Aliases accepted in source and configs (``aspects_deprecated.def``).
ALIASES = {"usm_system_allocator": Aspect.usm_system_allocations}

#: Struct types the front end marks as using an aspect (``!sycl_types_that_use_aspects``):
#: our ``half`` is stored as DPC++'s ``sycl::half`` class, so upstream's rule applies to it.
HALF_CLASS = "class.sycl::_V1::detail::half_impl::half"
TYPES_THAT_USE_ASPECTS = {HALF_CLASS: Aspect.fp16}


def lookup(name: str) -> Aspect | None:
    """The aspect called ``name`` (SYCL spelling, aliases accepted), or None."""
    if name in ALIASES:
        return ALIASES[name]
    return Aspect.__members__.get(name)


def aspect_name(number: int, unknown: str = "{}") -> str:
    """The name of aspect ``number``; for a number the table lacks, ``unknown``
    with the number filled in (``"{}"``: the number itself)."""
    try:
        return Aspect(number).name
    except ValueError:
        return unknown.format(number)


def names() -> list[str]:
    """All aspect names in numeric order (for messages and ``!sycl_aspects``)."""
    return [a.name for a in Aspect]
