"""CLD2 through pycld2, without pycld2's memory leaks.

pycld2 0.42 (the `lang` extra) leaks on every call, which made every worker of a build grow with
the documents it detected (issue 29: ~1.9 KB a document, the growth measured from outside):

- given a `str`, it keeps the UTF-8 copy it makes of the text (~the text's size a call): we pass
  the UTF-8 bytes ourselves, which it reads in place (CLD2 sees the same bytes, so the same result);
- with `returnVectors=True`, the tuple of byte-range vectors it returns carries one reference too
  many, so it and every tuple, int and string in it outlive the call. We drop that one reference,
  and only when it is there: the holders of the tuple are known (the result tuple, our name, and
  `sys.getrefcount`'s argument), so a count above that is the leak, and a pycld2 that no longer
  leaks is left alone.

Measured with tracemalloc over 2,000 real texts: ~1.9-3.4 KB kept a call before, none after.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

_decref = ctypes.pythonapi.Py_DecRef
_decref.argtypes = [ctypes.py_object]
_decref.restype = None
_HOLDERS = 3  # the result tuple, the name `spans` below, and getrefcount's own argument


def error_class() -> type[Exception]:
    """The exception pycld2 raises on text CLD2 cannot read."""
    import pycld2  # type: ignore[import-untyped]  # the lang extra

    return pycld2.error  # type: ignore[no-any-return]


def detect(text: str, vectors: bool) -> tuple[Any, ...]:
    """pycld2.detect(text, bestEffort=True, returnVectors=vectors), leaking nothing."""
    import pycld2  # the lang extra; imported once, then a dictionary lookup

    result = pycld2.detect(text.encode("utf-8"), bestEffort=True, returnVectors=vectors)
    if vectors:
        spans = result[3]
        if sys.getrefcount(spans) > _HOLDERS:
            _decref(spans)
    return result  # type: ignore[no-any-return]
