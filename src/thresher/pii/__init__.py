"""Personal data redaction: e-mail addresses, IP addresses, phone numbers, payment cards, IBANs.

`detect(text, types)` finds them (validated by checksum or parsing where one exists);
`RedactPii(PiiConfig(types=...))` is the pipeline transform that replaces them. See docs/pii.md.
"""

from thresher.pii.config import PiiConfig
from thresher.pii.detect import TYPES, Match, detect
from thresher.pii.redact import RedactPii

__all__ = ["TYPES", "Match", "PiiConfig", "RedactPii", "detect"]
