"""Device configuration files, one YAML file per target (read by ``minisycl.device_configs.targets``)."""
