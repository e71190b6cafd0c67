"""Compiled kernels, each optional: where one does not build, the pure-Python code runs instead.

Metadata lives in pyproject.toml; this file only declares the C extensions.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("thresher.quality._repetition", ["src/thresher/quality/_repetition.c"], optional=True),
    ],
)
