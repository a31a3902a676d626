; The native half of DLPack (runtime/dlpack.py says what each entry point is for,
; and why it is native): capsules made and taken, deleters and destructors.
;
; JIT-compiled once per process (dlpack_native.py).  The Python C API functions
; declared below are registered with LLVM at their addresses in this interpreter
; before the object is loaded; the entry points become Python builtins
; (PyCFunction objects over this code), so a call costs what a builtin's does.
; Every function that touches a Python object runs with the GIL held, except the
; deleters, which take it (a consumer may let go from any thread).
;
; dlpack.h (v1.0) on 64-bit hosts; dlpack.py's ctypes.Structure definitions have
; the same layout (tests/runtime/test_interop.py checks both against each other).
;   DLTensor: data, device {type, id}, ndim, dtype {code, bits, lanes}, shape,
;             strides, byte_offset
%DLTensor = type { ptr, i32, i32, i32, i8, i8, i16, ptr, ptr, i64 }
;   DLManagedTensor: dl_tensor, manager_ctx, deleter
%DLManagedTensor = type { %DLTensor, ptr, ptr }
;   DLManagedTensorVersioned: version {major, minor}, manager_ctx, deleter, flags, dl_tensor
%DLManagedTensorVersioned = type { i32, i32, ptr, ptr, i64, %DLTensor }
; what an export allocates: the structure, then its one-dimensional shape and stride
%legacy_export = type { %DLManagedTensor, i64, i64 }
%versioned_export = type { %DLManagedTensorVersioned, i64, i64 }

; exported tensors whose deleter has not run yet (dlpack.exports_alive)
@alive = internal global i64 0

; capsule names (a capsule keeps a pointer to its name: these live with the code)
@dltensor = private constant [9 x i8] c"dltensor\00"
@dltensor_versioned = private constant [19 x i8] c"dltensor_versioned\00"
@used_dltensor = private constant [14 x i8] c"used_dltensor\00"
@used_dltensor_versioned = private constant [24 x i8] c"used_dltensor_versioned\00"
; the handle of a taken tensor: its context says whether the producer's deleter
; is still to be called (1: a DLManagedTensor, 2: a versioned one; null: called)
@imported = private constant [23 x i8] c"minisycl.dlpack_import\00"

declare ptr @PyCapsule_New(ptr, ptr, ptr)
declare i32 @PyCapsule_IsValid(ptr, ptr)
declare ptr @PyCapsule_GetPointer(ptr, ptr)
declare i32 @PyCapsule_SetName(ptr, ptr)
declare ptr @PyCapsule_GetContext(ptr)
declare i32 @PyCapsule_SetContext(ptr, ptr)
declare ptr @PyLong_AsVoidPtr(ptr)
declare i64 @PyLong_AsLongLong(ptr)
declare ptr @PyLong_FromLongLong(i64)
declare ptr @PyTuple_New(i64)
declare ptr @PyDict_GetItemWithError(ptr, ptr)
declare i32 @PyTuple_SetItem(ptr, i64, ptr)
declare ptr @PyErr_Occurred()
declare i32 @PyErr_BadArgument()
declare ptr @PyErr_NoMemory()
declare void @Py_IncRef(ptr)
declare void @Py_DecRef(ptr)
declare i32 @Py_IsInitialized()
declare i32 @PyGILState_Ensure()
declare void @PyGILState_Release(i32)
declare ptr @malloc(i64)
declare void @free(ptr)
declare { i64, i1 } @llvm.smul.with.overflow.i64(i64, i64)

; --- going out -------------------------------------------------------------------

; export(address, count, code, bits, device_type, device_id, flags, keepalive)
; (METH_FASTCALL): a capsule "dltensor" (flags bit 0 clear) or "dltensor_versioned"
; (bit 0 set; bit 1: read-only) of `count` elements at `address`, one dimension;
; `keepalive` is held (a reference in manager_ctx) until the deleter runs.
define ptr @msycl_dlpack_export(ptr %self, ptr %args, i64 %nargs) {
entry:
  %right = icmp eq i64 %nargs, 8
  br i1 %right, label %parse, label %bad
bad:
  %b = call i32 @PyErr_BadArgument()
  ret ptr null
parse:
  %p1 = getelementptr ptr, ptr %args, i64 1
  %p2 = getelementptr ptr, ptr %args, i64 2
  %p3 = getelementptr ptr, ptr %args, i64 3
  %p4 = getelementptr ptr, ptr %args, i64 4
  %p5 = getelementptr ptr, ptr %args, i64 5
  %p6 = getelementptr ptr, ptr %args, i64 6
  %p7 = getelementptr ptr, ptr %args, i64 7
  %a0 = load ptr, ptr %args
  %a1 = load ptr, ptr %p1
  %a2 = load ptr, ptr %p2
  %a3 = load ptr, ptr %p3
  %a4 = load ptr, ptr %p4
  %a5 = load ptr, ptr %p5
  %a6 = load ptr, ptr %p6
  %keep = load ptr, ptr %p7
  %data = call ptr @PyLong_AsVoidPtr(ptr %a0)
  %count = call i64 @PyLong_AsLongLong(ptr %a1)
  %code = call i64 @PyLong_AsLongLong(ptr %a2)
  %bits = call i64 @PyLong_AsLongLong(ptr %a3)
  %dtype = call i64 @PyLong_AsLongLong(ptr %a4)
  %did = call i64 @PyLong_AsLongLong(ptr %a5)
  %flags = call i64 @PyLong_AsLongLong(ptr %a6)
  %err = call ptr @PyErr_Occurred()
  %failed = icmp ne ptr %err, null
  br i1 %failed, label %fail, label %allocate
fail:
  ret ptr null
allocate:
  %v = and i64 %flags, 1
  %versioned = icmp ne i64 %v, 0
  %size = select i1 %versioned, i64 96, i64 80
  %block = call ptr @malloc(i64 %size)
  %none = icmp eq ptr %block, null
  br i1 %none, label %no_memory, label %which
no_memory:
  %nm = call ptr @PyErr_NoMemory()
  ret ptr null
which:
  br i1 %versioned, label %fill_versioned, label %fill_legacy
fill_versioned:
  %major = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 0
  store i32 1, ptr %major
  %minor = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 1
  store i32 0, ptr %minor
  %ctx_v = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 2
  store ptr %keep, ptr %ctx_v
  %del_v = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 3
  store ptr @msycl_dlpack_deleter_versioned, ptr %del_v
  %ro = lshr i64 %flags, 1
  %ro1 = and i64 %ro, 1                 ; DLPACK_FLAG_BITMASK_READ_ONLY
  %flags_v = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 4
  store i64 %ro1, ptr %flags_v
  %tensor_v = getelementptr %DLManagedTensorVersioned, ptr %block, i64 0, i32 5
  %shape_v = getelementptr %versioned_export, ptr %block, i64 0, i32 1
  %stride_v = getelementptr %versioned_export, ptr %block, i64 0, i32 2
  br label %fill
fill_legacy:
  %ctx_l = getelementptr %DLManagedTensor, ptr %block, i64 0, i32 1
  store ptr %keep, ptr %ctx_l
  %del_l = getelementptr %DLManagedTensor, ptr %block, i64 0, i32 2
  store ptr @msycl_dlpack_deleter, ptr %del_l
  %shape_l = getelementptr %legacy_export, ptr %block, i64 0, i32 1
  %stride_l = getelementptr %legacy_export, ptr %block, i64 0, i32 2
  br label %fill
fill:
  %t = phi ptr [ %tensor_v, %fill_versioned ], [ %block, %fill_legacy ]
  %shape = phi ptr [ %shape_v, %fill_versioned ], [ %shape_l, %fill_legacy ]
  %stride = phi ptr [ %stride_v, %fill_versioned ], [ %stride_l, %fill_legacy ]
  %name = phi ptr [ @dltensor_versioned, %fill_versioned ], [ @dltensor, %fill_legacy ]
  store i64 %count, ptr %shape
  store i64 1, ptr %stride
  %f0 = getelementptr %DLTensor, ptr %t, i64 0, i32 0
  store ptr %data, ptr %f0
  %f1 = getelementptr %DLTensor, ptr %t, i64 0, i32 1
  %dtype32 = trunc i64 %dtype to i32
  store i32 %dtype32, ptr %f1
  %f2 = getelementptr %DLTensor, ptr %t, i64 0, i32 2
  %did32 = trunc i64 %did to i32
  store i32 %did32, ptr %f2
  %f3 = getelementptr %DLTensor, ptr %t, i64 0, i32 3
  store i32 1, ptr %f3
  %f4 = getelementptr %DLTensor, ptr %t, i64 0, i32 4
  %code8 = trunc i64 %code to i8
  store i8 %code8, ptr %f4
  %f5 = getelementptr %DLTensor, ptr %t, i64 0, i32 5
  %bits8 = trunc i64 %bits to i8
  store i8 %bits8, ptr %f5
  %f6 = getelementptr %DLTensor, ptr %t, i64 0, i32 6
  store i16 1, ptr %f6
  %f7 = getelementptr %DLTensor, ptr %t, i64 0, i32 7
  store ptr %shape, ptr %f7
  %f8 = getelementptr %DLTensor, ptr %t, i64 0, i32 8
  store ptr %stride, ptr %f8
  %f9 = getelementptr %DLTensor, ptr %t, i64 0, i32 9
  store i64 0, ptr %f9
  call void @Py_IncRef(ptr %keep)
  %before = atomicrmw add ptr @alive, i64 1 monotonic
  %cap = call ptr @PyCapsule_New(ptr %block, ptr %name, ptr @msycl_dlpack_capsule_destructor)
  %lost = icmp eq ptr %cap, null
  br i1 %lost, label %undo, label %done
undo:
  call void @release_export(ptr %keep, ptr %block)
  ret ptr null
done:
  ret ptr %cap
}

; DLManagedTensor::deleter of our exports: the consumer is done (or the capsule was
; never taken).  Called by consumers from any thread, with or without the GIL.
define void @msycl_dlpack_deleter(ptr %m) {
entry:
  %null = icmp eq ptr %m, null
  br i1 %null, label %out, label %go
go:
  %p = getelementptr %DLManagedTensor, ptr %m, i64 0, i32 1
  %ctx = load ptr, ptr %p
  call void @release_export(ptr %ctx, ptr %m)
  br label %out
out:
  ret void
}

define void @msycl_dlpack_deleter_versioned(ptr %m) {
entry:
  %null = icmp eq ptr %m, null
  br i1 %null, label %out, label %go
go:
  %p = getelementptr %DLManagedTensorVersioned, ptr %m, i64 0, i32 2
  %ctx = load ptr, ptr %p
  call void @release_export(ptr %ctx, ptr %m)
  br label %out
out:
  ret void
}

; drop the reference to what keeps the memory alive (under the GIL; not once the
; interpreter has gone, as NumPy's deleter does), free the structure
define internal void @release_export(ptr %keep, ptr %block) {
entry:
  %up = call i32 @Py_IsInitialized()
  %live = icmp ne i32 %up, 0
  br i1 %live, label %drop, label %forget
drop:
  %gil = call i32 @PyGILState_Ensure()
  call void @Py_DecRef(ptr %keep)
  call void @PyGILState_Release(i32 %gil)
  br label %forget
forget:
  call void @free(ptr %block)
  %before = atomicrmw sub ptr @alive, i64 1 monotonic
  ret void
}

; the destructor of our capsules: one no consumer took (still named "dltensor" or
; "dltensor_versioned", not "used_...") still owns its tensor: delete it
define void @msycl_dlpack_capsule_destructor(ptr %cap) {
entry:
  %l = call i32 @PyCapsule_IsValid(ptr %cap, ptr @dltensor)
  %is_l = icmp ne i32 %l, 0
  br i1 %is_l, label %legacy, label %try_versioned
legacy:
  %pl = call ptr @PyCapsule_GetPointer(ptr %cap, ptr @dltensor)
  call void @msycl_dlpack_deleter(ptr %pl)
  ret void
try_versioned:
  %v = call i32 @PyCapsule_IsValid(ptr %cap, ptr @dltensor_versioned)
  %is_v = icmp ne i32 %v, 0
  br i1 %is_v, label %versioned, label %taken
versioned:
  %pv = call ptr @PyCapsule_GetPointer(ptr %cap, ptr @dltensor_versioned)
  call void @msycl_dlpack_deleter_versioned(ptr %pv)
  ret void
taken:
  ret void
}

; --- coming in -------------------------------------------------------------------

; take(capsule, dtypes) (METH_FASTCALL): a producer's capsule taken (renamed
; "used_...").  Returns 1 when it is no capsule named "dltensor" or
; "dltensor_versioned" (not taken), 2 when it is versioned with a major version
; other than 1 (not taken), else the tuple (handle, address + byte_offset,
; (device type, device id), dtype, element count, read-only flag), where dtype
; is dtypes[code | bits << 8 | lanes << 16] (a dict of the types met so far).
; When that key is not in dtypes, or the tensor cannot be used, a seventh item
; follows and dtype is the key: 0, or (problem, ndim, shape, strides) with
; problem 1 ndim outside [0, 64], 2 a negative extent, 3 not contiguous, 4 more
; elements than an int64 counts, 5 no shape array (shape: a tuple for 2, 3 and
; 4, else (); strides: a tuple for 3, else ()).  The handle (a capsule named
; "minisycl.dlpack_import") calls the producer's deleter once: at
; release(handle) or when it is destroyed, so a refused tensor is given back
; when the caller drops the result.
define ptr @msycl_dlpack_take(ptr %self, ptr %args, i64 %nargs) {
entry:
  %right = icmp eq i64 %nargs, 2
  br i1 %right, label %parse, label %bad
bad:
  %b = call i32 @PyErr_BadArgument()
  ret ptr null
parse:
  %cap = load ptr, ptr %args
  %pd = getelementptr ptr, ptr %args, i64 1
  %dtypes = load ptr, ptr %pd
  %v = call i32 @PyCapsule_IsValid(ptr %cap, ptr @dltensor_versioned)
  %is_v = icmp ne i32 %v, 0
  br i1 %is_v, label %versioned, label %try_legacy
try_legacy:
  %l = call i32 @PyCapsule_IsValid(ptr %cap, ptr @dltensor)
  %is_l = icmp ne i32 %l, 0
  br i1 %is_l, label %legacy, label %not_a_tensor
not_a_tensor:
  %r1 = call ptr @PyLong_FromLongLong(i64 1)
  ret ptr %r1
versioned:
  %mv = call ptr @PyCapsule_GetPointer(ptr %cap, ptr @dltensor_versioned)
  %major = load i32, ptr %mv
  %supported = icmp eq i32 %major, 1
  br i1 %supported, label %take_versioned, label %other_version
other_version:
  %r2 = call ptr @PyLong_FromLongLong(i64 2)
  ret ptr %r2
take_versioned:
  %sv = call i32 @PyCapsule_SetName(ptr %cap, ptr @used_dltensor_versioned)
  %fp = getelementptr %DLManagedTensorVersioned, ptr %mv, i64 0, i32 4
  %fv = load i64, ptr %fp
  %tv = getelementptr %DLManagedTensorVersioned, ptr %mv, i64 0, i32 5
  br label %taken
legacy:
  %ml = call ptr @PyCapsule_GetPointer(ptr %cap, ptr @dltensor)
  %sl = call i32 @PyCapsule_SetName(ptr %cap, ptr @used_dltensor)
  br label %taken
taken:
  %m = phi ptr [ %mv, %take_versioned ], [ %ml, %legacy ]
  %t = phi ptr [ %tv, %take_versioned ], [ %ml, %legacy ]
  %flags = phi i64 [ %fv, %take_versioned ], [ 0, %legacy ]
  %kind = phi i64 [ 2, %take_versioned ], [ 1, %legacy ]
  ; ours now: the handle gives it back whatever happens next
  %h = call ptr @PyCapsule_New(ptr %m, ptr @imported, ptr @msycl_dlpack_import_destructor)
  %no_h = icmp eq ptr %h, null
  br i1 %no_h, label %no_handle, label %held
no_handle:
  %kp = inttoptr i64 %kind to ptr
  call void @give_back(ptr %m, ptr %kp)
  ret ptr null
held:
  %kind_p = inttoptr i64 %kind to ptr
  %sc = call i32 @PyCapsule_SetContext(ptr %h, ptr %kind_p)
  %g0 = getelementptr %DLTensor, ptr %t, i64 0, i32 0
  %data = load ptr, ptr %g0
  %g1 = getelementptr %DLTensor, ptr %t, i64 0, i32 1
  %dtype_id = load i32, ptr %g1
  %g2 = getelementptr %DLTensor, ptr %t, i64 0, i32 2
  %did = load i32, ptr %g2
  %g3 = getelementptr %DLTensor, ptr %t, i64 0, i32 3
  %ndim32 = load i32, ptr %g3
  %g4 = getelementptr %DLTensor, ptr %t, i64 0, i32 4
  %code = load i8, ptr %g4
  %g5 = getelementptr %DLTensor, ptr %t, i64 0, i32 5
  %bits = load i8, ptr %g5
  %g6 = getelementptr %DLTensor, ptr %t, i64 0, i32 6
  %lanes = load i16, ptr %g6
  %g7 = getelementptr %DLTensor, ptr %t, i64 0, i32 7
  %shape = load ptr, ptr %g7
  %g8 = getelementptr %DLTensor, ptr %t, i64 0, i32 8
  %strides = load ptr, ptr %g8
  %g9 = getelementptr %DLTensor, ptr %t, i64 0, i32 9
  %offset = load i64, ptr %g9
  %base = ptrtoint ptr %data to i64
  %address = add i64 %base, %offset
  %c = zext i8 %code to i64
  %bt = zext i8 %bits to i64
  %bt8 = shl i64 %bt, 8
  %ln = zext i16 %lanes to i64
  %ln16 = shl i64 %ln, 16
  %key0 = or i64 %c, %bt8
  %key = or i64 %key0, %ln16
  %ndim = sext i32 %ndim32 to i64
  %ndim_ok = icmp ule i32 %ndim32, 64   ; (a negative ndim is a large unsigned one)
  br i1 %ndim_ok, label %has_dims, label %judged
has_dims:
  %no_shape = icmp eq ptr %shape, null
  %some = icmp ne i64 %ndim, 0
  %missing = and i1 %no_shape, %some
  br i1 %missing, label %judged, label %shape_loop
shape_loop:
  %i = phi i64 [ 0, %has_dims ], [ %i1, %shape_next ]
  %n = phi i64 [ 1, %has_dims ], [ %n1, %shape_next ]
  %neg = phi i1 [ false, %has_dims ], [ %neg1, %shape_next ]
  %big = phi i1 [ false, %has_dims ], [ %big1, %shape_next ]
  %more = icmp slt i64 %i, %ndim
  br i1 %more, label %shape_next, label %contiguity
shape_next:
  %sp = getelementptr i64, ptr %shape, i64 %i
  %s = load i64, ptr %sp
  %is_neg = icmp slt i64 %s, 0
  %neg1 = or i1 %neg, %is_neg
  %prod = call { i64, i1 } @llvm.smul.with.overflow.i64(i64 %n, i64 %s)
  %n1 = extractvalue { i64, i1 } %prod, 0
  %o = extractvalue { i64, i1 } %prod, 1
  %big1 = or i1 %big, %o
  %i1 = add i64 %i, 1
  br label %shape_loop
contiguity:
  ; row-major and compact: from the last dimension, each stride (of an extent
  ; other than 1) is the product of the extents after it.  Checked only for
  ; more than one element (the strides of 0 or 1 element say nothing) and no
  ; strides (NULL) means compact.
  %has_strides = icmp ne ptr %strides, null
  %several = icmp sgt i64 %n, 1
  %unsound = or i1 %neg, %big
  %clean = xor i1 %unsound, true
  %check0 = and i1 %several, %clean
  %check = and i1 %check0, %has_strides
  br i1 %check, label %walk, label %walked
walk:
  %k = phi i64 [ %ndim, %contiguity ], [ %k0, %walk_next ]
  %expect = phi i64 [ 1, %contiguity ], [ %expect1, %walk_next ]
  %at_start = icmp eq i64 %k, 0
  br i1 %at_start, label %walked, label %walk_step
walk_step:
  %k0 = add i64 %k, -1
  %wp = getelementptr i64, ptr %shape, i64 %k0
  %ext = load i64, ptr %wp
  %xp = getelementptr i64, ptr %strides, i64 %k0
  %stride_k = load i64, ptr %xp
  %unit = icmp eq i64 %ext, 1
  %fits = icmp eq i64 %stride_k, %expect
  %fine = or i1 %unit, %fits
  br i1 %fine, label %walk_next, label %gapped
walk_next:
  %expect1 = mul i64 %expect, %ext
  br label %walk
gapped:
  br label %walked
walked:
  %gap = phi i1 [ false, %contiguity ], [ false, %walk ], [ true, %gapped ]
  ; (the first of: negative extent, too many elements, not contiguous)
  %pb3 = select i1 %gap, i64 3, i64 0
  %pb4 = select i1 %big, i64 4, i64 %pb3
  %pb2 = select i1 %neg, i64 2, i64 %pb4
  br label %judged
judged:
  %count = phi i64 [ 0, %held ], [ 0, %has_dims ], [ %n, %walked ]
  %problem = phi i64 [ 1, %held ], [ 5, %has_dims ], [ %pb2, %walked ]
  ; the dtype: from the dict of types met so far, else its key
  %keyo = call ptr @PyLong_FromLongLong(i64 %key)
  %no_key = icmp eq ptr %keyo, null
  br i1 %no_key, label %lost_handle, label %look_up
look_up:
  %found = call ptr @PyDict_GetItemWithError(ptr %dtypes, ptr %keyo)
  %known = icmp ne ptr %found, null
  br i1 %known, label %known_type, label %new_type
known_type:
  call void @Py_IncRef(ptr %found)
  call void @Py_DecRef(ptr %keyo)
  br label %typed
new_type:
  %why = call ptr @PyErr_Occurred()
  %failed = icmp ne ptr %why, null
  br i1 %failed, label %lost_key, label %typed
lost_key:
  call void @Py_DecRef(ptr %keyo)
  br label %lost_handle
lost_handle:
  call void @Py_DecRef(ptr %h)          ; (its destructor gives the tensor back)
  ret ptr null
typed:
  %dtype = phi ptr [ %found, %known_type ], [ %keyo, %new_type ]
  %fine_problem = icmp eq i64 %problem, 0
  %clean_all = and i1 %fine_problem, %known
  %items = select i1 %clean_all, i64 6, i64 7
  %out = call ptr @PyTuple_New(i64 %items)
  %device = call ptr @PyTuple_New(i64 2)
  %dt = zext i32 %dtype_id to i64
  %dv = zext i32 %did to i64
  %d0 = call ptr @PyLong_FromLongLong(i64 %dt)
  %d1 = call ptr @PyLong_FromLongLong(i64 %dv)
  %x1 = call ptr @PyLong_FromLongLong(i64 %address)
  %x4 = call ptr @PyLong_FromLongLong(i64 %count)
  %ro = and i64 %flags, 1               ; DLPACK_FLAG_BITMASK_READ_ONLY
  %x5 = call ptr @PyLong_FromLongLong(i64 %ro)
  %x6 = call ptr @detail(i1 %clean_all, i64 %problem, i64 %ndim, ptr %shape, ptr %strides)
  ; (a failed allocation above left a null: the whole result goes, the handle
  ; with it, which gives the tensor back)
  %ok_out = icmp ne ptr %out, null
  %ok_dev = icmp ne ptr %device, null
  %ok_tuples = and i1 %ok_out, %ok_dev
  br i1 %ok_tuples, label %fill_out, label %lost_tuple
lost_tuple:
  call void @drop(ptr %out)
  call void @drop(ptr %device)
  call void @drop(ptr %d0)
  call void @drop(ptr %d1)
  call void @drop(ptr %x1)
  call void @drop(ptr %x4)
  call void @drop(ptr %x5)
  call void @drop(ptr %x6)
  call void @Py_DecRef(ptr %dtype)
  call void @Py_DecRef(ptr %h)
  ret ptr null
fill_out:
  %q0 = call i32 @PyTuple_SetItem(ptr %device, i64 0, ptr %d0)
  %q1 = call i32 @PyTuple_SetItem(ptr %device, i64 1, ptr %d1)
  %w0 = call i32 @PyTuple_SetItem(ptr %out, i64 0, ptr %h)
  %w1 = call i32 @PyTuple_SetItem(ptr %out, i64 1, ptr %x1)
  %w2 = call i32 @PyTuple_SetItem(ptr %out, i64 2, ptr %device)
  %w3 = call i32 @PyTuple_SetItem(ptr %out, i64 3, ptr %dtype)
  %w4 = call i32 @PyTuple_SetItem(ptr %out, i64 4, ptr %x4)
  %w5 = call i32 @PyTuple_SetItem(ptr %out, i64 5, ptr %x5)
  %null0 = icmp eq ptr %d0, null
  %null1 = icmp eq ptr %d1, null
  %null2 = icmp eq ptr %x1, null
  %null3 = icmp eq ptr %x4, null
  %null4 = icmp eq ptr %x5, null
  %m0 = or i1 %null0, %null1
  %m1 = or i1 %m0, %null2
  %m2 = or i1 %m1, %null3
  %m3 = or i1 %m2, %null4
  br i1 %clean_all, label %checked, label %seventh
seventh:
  %w6 = call i32 @PyTuple_SetItem(ptr %out, i64 6, ptr %x6)
  %null5 = icmp eq ptr %x6, null
  %m4 = or i1 %m3, %null5
  br label %checked
checked:
  %lost = phi i1 [ %m3, %fill_out ], [ %m4, %seventh ]
  br i1 %lost, label %lost_item, label %complete
lost_item:
  call void @Py_DecRef(ptr %out)        ; (its items: the handle among them)
  ret ptr null
complete:
  ret ptr %out
}

; take's seventh item (see take): null when there is none (%clean), else 0 or
; (problem, ndim, shape, strides); null too when an allocation fails
define internal ptr @detail(i1 %clean, i64 %problem, i64 %ndim, ptr %shape, ptr %strides) {
entry:
  br i1 %clean, label %none, label %some
none:
  ret ptr null
some:
  %fine = icmp eq i64 %problem, 0
  br i1 %fine, label %zero, label %explain
zero:
  %z = call ptr @PyLong_FromLongLong(i64 0)
  ret ptr %z
explain:
  ; the shape for problems 2, 3 and 4 (ndim valid, shape present); strides for 3
  %p2 = icmp eq i64 %problem, 2
  %p3 = icmp eq i64 %problem, 3
  %p4 = icmp eq i64 %problem, 4
  %p23 = or i1 %p2, %p3
  %with_shape = or i1 %p23, %p4
  %shape_n = select i1 %with_shape, i64 %ndim, i64 0
  %strides_n = select i1 %p3, i64 %ndim, i64 0
  %st = call ptr @int_tuple(ptr %shape, i64 %shape_n)
  %tt = call ptr @int_tuple(ptr %strides, i64 %strides_n)
  %pr = call ptr @PyLong_FromLongLong(i64 %problem)
  %nd = call ptr @PyLong_FromLongLong(i64 %ndim)
  %out = call ptr @PyTuple_New(i64 4)
  %a = icmp eq ptr %st, null
  %b = icmp eq ptr %tt, null
  %c = icmp eq ptr %pr, null
  %d = icmp eq ptr %nd, null
  %e = icmp eq ptr %out, null
  %ab = or i1 %a, %b
  %cd = or i1 %c, %d
  %abcd = or i1 %ab, %cd
  %any = or i1 %abcd, %e
  br i1 %any, label %lost, label %fill
lost:
  call void @drop(ptr %st)
  call void @drop(ptr %tt)
  call void @drop(ptr %pr)
  call void @drop(ptr %nd)
  call void @drop(ptr %out)
  ret ptr null
fill:
  %s0 = call i32 @PyTuple_SetItem(ptr %out, i64 0, ptr %pr)
  %s1 = call i32 @PyTuple_SetItem(ptr %out, i64 1, ptr %nd)
  %s2 = call i32 @PyTuple_SetItem(ptr %out, i64 2, ptr %st)
  %s3 = call i32 @PyTuple_SetItem(ptr %out, i64 3, ptr %tt)
  ret ptr %out
}

; a tuple of the %n int64 values at %values, or null when an allocation fails
define internal ptr @int_tuple(ptr %values, i64 %n) {
entry:
  %t = call ptr @PyTuple_New(i64 %n)
  %none = icmp eq ptr %t, null
  br i1 %none, label %lost, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %next, label %done
next:
  %p = getelementptr i64, ptr %values, i64 %i
  %v = load i64, ptr %p
  %item = call ptr @PyLong_FromLongLong(i64 %v)
  %u = call i32 @PyTuple_SetItem(ptr %t, i64 %i, ptr %item)
  %i1 = add i64 %i, 1
  %bad = icmp eq ptr %item, null
  br i1 %bad, label %drop_it, label %loop
drop_it:
  call void @Py_DecRef(ptr %t)
  br label %lost
lost:
  ret ptr null
done:
  ret ptr %t
}

define internal void @drop(ptr %o) {
entry:
  %null = icmp eq ptr %o, null
  br i1 %null, label %out, label %go
go:
  call void @Py_DecRef(ptr %o)
  br label %out
out:
  ret void
}

; call the producer's deleter of tensor %m (%kind: 1 a DLManagedTensor, 2 versioned)
define internal void @give_back(ptr %m, ptr %kind) {
entry:
  %k = ptrtoint ptr %kind to i64
  %is_v = icmp eq i64 %k, 2
  %pv = getelementptr %DLManagedTensorVersioned, ptr %m, i64 0, i32 3
  %pl = getelementptr %DLManagedTensor, ptr %m, i64 0, i32 2
  %p = select i1 %is_v, ptr %pv, ptr %pl
  %deleter = load ptr, ptr %p
  %has = icmp ne ptr %deleter, null
  br i1 %has, label %call, label %out
call:
  call void %deleter(ptr %m)
  br label %out
out:
  ret void
}

; release(handle) (METH_O): the producer's deleter, called now unless it was already
; (returns 1 when this call gave the tensor back, else 0)
define ptr @msycl_dlpack_release(ptr %self, ptr %h) {
entry:
  %ours = call i32 @PyCapsule_IsValid(ptr %h, ptr @imported)
  %is = icmp ne i32 %ours, 0
  br i1 %is, label %look, label %bad
bad:
  %b = call i32 @PyErr_BadArgument()
  ret ptr null
look:
  %kind = call ptr @PyCapsule_GetContext(ptr %h)
  %live = icmp ne ptr %kind, null
  br i1 %live, label %go, label %done
go:
  %sc = call i32 @PyCapsule_SetContext(ptr %h, ptr null)
  %m = call ptr @PyCapsule_GetPointer(ptr %h, ptr @imported)
  call void @give_back(ptr %m, ptr %kind)
  br label %done
done:
  %r = zext i1 %live to i64
  %out = call ptr @PyLong_FromLongLong(i64 %r)
  ret ptr %out
}

; the handle's destructor: the producer's deleter, unless release() called it
define void @msycl_dlpack_import_destructor(ptr %h) {
entry:
  %kind = call ptr @PyCapsule_GetContext(ptr %h)
  %live = icmp ne ptr %kind, null
  br i1 %live, label %go, label %done
go:
  %m = call ptr @PyCapsule_GetPointer(ptr %h, ptr @imported)
  call void @give_back(ptr %m, ptr %kind)
  br label %done
done:
  ret void
}

; exports_alive() (METH_NOARGS)
define ptr @msycl_dlpack_exports_alive(ptr %self, ptr %unused) {
entry:
  %n = load atomic i64, ptr @alive monotonic, align 8
  %out = call ptr @PyLong_FromLongLong(i64 %n)
  ret ptr %out
}
