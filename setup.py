"""Compiled kernels, each optional: where one does not build, the pure-Python code runs instead.

Metadata lives in pyproject.toml; this file only declares the C extensions. Each module's Python
reference stays in the package and runs where the module is absent or THRESHER_PURE_PYTHON=1 is set.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("thresher.extract._ctree", ["src/thresher/extract/_ctree.c"], optional=True),
        Extension("thresher.quality._repetition", ["src/thresher/quality/_repetition.c"], optional=True),
        Extension("thresher.dedup._minhash", ["src/thresher/dedup/_minhash.c"], optional=True),
        Extension("thresher.quality._domainlist", ["src/thresher/quality/_domainlist.c"], optional=True),
    ],
)
