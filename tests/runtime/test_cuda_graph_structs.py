"""The C structures of the CUDA driver's graph calls (issue 20 point 6), checked
without a GPU: sizes and field offsets as ``cuda.h`` lays them out on a 64-bit
host (each pointer and ``size_t`` 8 bytes, each enum and ``unsigned int`` 4,
padding to the next 8-byte field).  A wrong layout would make the driver read
garbage, so the numbers are worked out here from the header's field lists."""
import ctypes

import pytest

from minisycl.runtime.cuda import driver


@pytest.mark.parametrize("struct, size", [
    (driver.KernelNodeParams, 72),      # func, 7 x uint (+4 padding), kernelParams, extra, kern, ctx
    (driver.Memcpy3D, 200),             # 2 x (4 size_t, enum (+4), 4 pointers, 2 size_t) + 3 size_t
    (driver.MemsetNodeParams, 40),      # dst, pitch, value, elementSize, width, height
    (driver.HostNodeParams, 16),        # fn, userData
    (driver.MemLocation, 8),            # type, id
    (driver.MemPoolProps, 88),          # 2 enums, location, pointer, maxSize, ushort usage, 54 reserved
    (driver.MemAllocNodeParams, 120),   # poolProps, accessDescs, accessDescCount, bytesize, dptr
    (driver.ExecUpdateResultInfo, 24),  # result (+4), errorNode, errorFromNode
    (driver.LaunchConfig, 56),          # 7 x uint (+4), hStream, attrs, numAttrs (+4)
])
def test_structure_sizes(struct, size):
    assert ctypes.sizeof(struct) == size


@pytest.mark.parametrize("struct, field, offset", [
    (driver.KernelNodeParams, "gridDimX", 8), (driver.KernelNodeParams, "sharedMemBytes", 32),
    (driver.KernelNodeParams, "kernelParams", 40), (driver.KernelNodeParams, "extra", 48),
    (driver.KernelNodeParams, "kern", 56), (driver.KernelNodeParams, "ctx", 64),
    (driver.Memcpy3D, "srcMemoryType", 32), (driver.Memcpy3D, "srcHost", 40), (driver.Memcpy3D, "srcDevice", 48),
    (driver.Memcpy3D, "srcHeight", 80), (driver.Memcpy3D, "dstXInBytes", 88), (driver.Memcpy3D, "dstMemoryType", 120),
    (driver.Memcpy3D, "dstDevice", 136), (driver.Memcpy3D, "WidthInBytes", 176), (driver.Memcpy3D, "Depth", 192),
    (driver.MemsetNodeParams, "value", 16), (driver.MemsetNodeParams, "elementSize", 20),
    (driver.MemsetNodeParams, "width", 24), (driver.MemsetNodeParams, "height", 32),
    (driver.HostNodeParams, "userData", 8),
    (driver.MemPoolProps, "location", 8), (driver.MemPoolProps, "win32SecurityAttributes", 16),
    (driver.MemPoolProps, "maxSize", 24), (driver.MemPoolProps, "usage", 32), (driver.MemPoolProps, "reserved", 34),
    (driver.MemAllocNodeParams, "accessDescs", 88), (driver.MemAllocNodeParams, "bytesize", 104),
    (driver.MemAllocNodeParams, "dptr", 112),
    (driver.ExecUpdateResultInfo, "errorNode", 8), (driver.ExecUpdateResultInfo, "errorFromNode", 16),
    (driver.LaunchConfig, "blockDimX", 12), (driver.LaunchConfig, "sharedMemBytes", 24),
    (driver.LaunchConfig, "hStream", 32), (driver.LaunchConfig, "attrs", 40), (driver.LaunchConfig, "numAttrs", 48),
])
def test_field_offsets(struct, field, offset):
    assert getattr(struct, field).offset == offset


def test_graph_calls_are_declared():
    for name in ("cuGraphCreate", "cuGraphAddKernelNode_v2", "cuGraphAddMemcpyNode", "cuGraphAddMemsetNode",
                 "cuGraphAddHostNode", "cuGraphAddEmptyNode", "cuGraphAddMemAllocNode", "cuGraphAddMemFreeNode",
                 "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecKernelNodeSetParams_v2",
                 "cuGraphExecHostNodeSetParams", "cuGraphExecUpdate_v2"):
        assert name in driver._SIGNATURES
    # the calls that take a context as their last argument
    assert len(driver._SIGNATURES["cuGraphAddMemcpyNode"]) == 6 == len(driver._SIGNATURES["cuGraphAddMemsetNode"])
