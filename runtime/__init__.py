"""runtime stage of minisycl (see ../shared/design/architecture.md)."""
