@dg_shared = global { ptr, i32 } zeroinitializer, align 8 #0

define weak_odr spir_kernel void @k1() #1 {
  %a = load i32, ptr getelementptr inbounds ({ ptr, i32 }, ptr @dg_shared, i32 0, i32 1)
  ret void
}

define weak_odr spir_kernel void @k2() #2 {
  %a = load i32, ptr getelementptr inbounds ({ ptr, i32 }, ptr @dg_shared, i32 0, i32 1)
  ret void
}

attributes #0 = { "sycl-unique-id"="uid_shared" "sycl-device-global-size"="4" }
attributes #1 = { "sycl-module-id"="a.cpp" }
attributes #2 = { "sycl-module-id"="b.cpp" }
