"""Build the optional C extension; the package metadata is in pyproject.toml.

`thresher.extract._ctree` (the compiled tree builder) is optional: where no C compiler works, the
build goes on without it and `thresher.extract.tree.parse` is the pure Python reference.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("thresher.extract._ctree", ["src/thresher/extract/_ctree.c"], optional=True),
    ],
)
