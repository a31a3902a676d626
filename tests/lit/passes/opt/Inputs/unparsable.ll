define void @f() {
  bogus
}
