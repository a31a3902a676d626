"""``python -m minisycl``: the same command as the ``minisycl`` console script."""
from minisycl.passes.support.cli import entry

if __name__ == "__main__":
    entry()
