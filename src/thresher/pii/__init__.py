"""Personal data redaction: e-mail addresses, IP addresses, phone numbers, payment cards, IBANs.

`detect(text, types)` finds them (validated by checksum or parsing where one exists);
`RedactPii(PiiConfig(types=...))` is the pipeline transform that replaces them. See docs/pii.md.
"""

# The package face is lazy (PEP 562): `thresher.pii.config` is imported by every command (the run
# config has a [pii] section), and that must not compile the detectors' patterns (~8 ms of CPU,
# `benchmarks/startup_costs.py`).
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from thresher.pii.config import PiiConfig
    from thresher.pii.detection import Match, detect
    from thresher.pii.names import TYPES
    from thresher.pii.redact import RedactPii

_EXPORTS = {
    "PiiConfig": "thresher.pii.config",
    "Match": "thresher.pii.detection",
    "detect": "thresher.pii.detection",
    "TYPES": "thresher.pii.names",
    "RedactPii": "thresher.pii.redact",
}

__all__ = ["TYPES", "Match", "PiiConfig", "RedactPii", "detect"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
