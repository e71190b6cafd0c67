"""The package's optional compiled kernels, and the one switch that turns them all off.

`setup.py` builds each where a C compiler works; where one is absent (no compiler at install) or
THRESHER_PURE_PYTHON is set to anything but "" or "0", the module's Python reference runs instead,
with identical results. Read once per kernel, when its Python module is imported.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

PURE_PYTHON_ENV = "THRESHER_PURE_PYTHON"
# Every compiled kernel (setup.py declares the same): the benchmarks' and tests' "pure Python" runs
# make these unimportable.
MODULES = ("thresher.extract._ctree", "thresher.quality._repetition", "thresher.dedup._minhash",
           "thresher.quality._domainlist")


def pure_python_asked() -> bool:
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def compiled_module(name: str) -> ModuleType | None:
    """The compiled kernel `name` (one of MODULES), or None where it is not built or switched off."""
    if pure_python_asked():
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
