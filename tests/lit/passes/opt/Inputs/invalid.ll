define i32 @f() {
entry:
  %a = add i32 %b, 1
  %b = add i32 1, 1
  ret i32 %a
}
