"""Infrastructure every stage uses, as LLVM's ``Support`` library is: diagnostics
(``diagnostics``), the environment variables (``knobs``), the pause of the cyclic
garbage collector (``gc_pause``), writing outputs (``output``) and the root of the
``minisycl`` command line (``cli``).

It imports nothing of minisycl outside itself, so every layer may use it.
"""
