"""Device configuration files, one YAML file per target (read by ``minisycl.postlink.device_config``)."""
