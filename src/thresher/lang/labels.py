"""Canonical language labels: ISO 639-3 code and ISO 15924 script, `eng_Latn`, `quc_Latn`, `und_Cans`.

A document's language is written twice: `lang.code`, ISO 639-1 where one exists (else 639-3), the
alias existing users read, and `lang.label`, the canonical label the card, the stats counters, the
signals table, per-language routing and `--partition-by language` folders use. The label's code is
the ISO 639-3 code that the 639-1 code stands for (ISO 639-2/T: `en` -> `eng`, `de` -> `deu`), so
the two forms convert both ways; for a macrolanguage that is the macrolanguage's code (`zh` ->
`zho`, `ar` -> `ara`, `ms` -> `msa`), whichever individual language a detector named (`cmn` and
`yue` are both `zh` today, see `thresher.lang.iso639`). Languages without a 639-1 code keep their
639-3 code (`quc`, `yue`). The script is the detection's (`lang.script`); an undetermined document is
`und_<script>`, and a record without a script `<code>_Zyyy`.

Users may name a language in either form wherever they select or route by language
(`--languages`, `[quality.by_language.<...>]`): `en`, `eng`, `en-US` (region ignored) name the
language in any script; `eng_Latn` or `sr-Latn` name one script of it (`Hans` and `Hant` are read as
`Hani`, the only Han script detection writes). `parse_language` checks such a
name and turns it into its canonical key (`eng`, `srp_Latn`); a malformed name or an unknown ISO
639-1 code is a `ConfigError` naming where it was written.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from thresher.core.errors import ConfigError
from thresher.lang.codes import CLD2_CODES, UNDETERMINED
from thresher.lang.iso639 import INDIVIDUAL_TO_1, ISO_639_3_TO_1

log = logging.getLogger(__name__)

NO_SCRIPT = "Zyyy"
# 639-1 -> the 639-3 code it stands for (the individual languages of a macrolanguage left out)
ISO_639_1_TO_3: dict[str, str] = {one: three for three, one in ISO_639_3_TO_1.items() if three not in INDIVIDUAL_TO_1}
_CODE = re.compile(r"[a-z]{2,3}")
_SCRIPT = re.compile(r"[A-Z][a-z]{3}")
_HAN = {"Hans": "Hani", "Hant": "Hani"}


def to_639_3(code: str) -> str:
    """The label's code of a `lang.code` value (`en` -> `eng`; `quc`, `und` unchanged)."""
    return ISO_639_1_TO_3.get(code, code)


def alias(code3: str) -> str:
    """The `lang.code` form of a label's code: ISO 639-1 where one exists (`eng` -> `en`)."""
    return ISO_639_3_TO_1.get(code3, code3)


def label(code: str | None, script: str | None) -> str:
    """The canonical label of a detection (`lang.code`, `lang.script`): `eng_Latn`, `und_Zyyy`."""
    return f"{to_639_3(code or UNDETERMINED)}_{script or NO_SCRIPT}"


def label_of(annotations: dict[str, object]) -> str:
    """A record's label: its `lang.label`, else made from `lang.code` and `lang.script` (records
    written before labels existed); `und_Zyyy` without language annotations."""
    written = annotations.get("lang.label")
    if isinstance(written, str) and written:
        return written
    code, script = annotations.get("lang.code"), annotations.get("lang.script")
    return label(code if isinstance(code, str) else None, script if isinstance(script, str) else None)


@dataclass(frozen=True, slots=True)
class LanguageName:
    """A language named by a user: its ISO 639-3 code and, optionally, one script."""

    code: str
    script: str | None = None

    @property
    def key(self) -> str:
        """`eng` (any script) or `eng_Latn` (that script only)."""
        return f"{self.code}_{self.script}" if self.script else self.code

    def matches(self, doc_label: str) -> bool:
        code, _, script = doc_label.partition("_")
        return code == self.code and (self.script is None or script == self.script)


def parse_language(name: str, where: str) -> LanguageName:
    """A user-written language name (`en`, `eng`, `en-US`, `eng_Latn`, `sr-Latn`) in canonical form;
    `ConfigError` (`where: ...`, one line) when it is malformed or an unknown ISO 639-1 code."""
    parts = name.strip().replace("-", "_").split("_")
    base = parts[0].lower()
    if not _CODE.fullmatch(base):
        raise ConfigError(f"{where}: {name!r} is not a language code (ISO 639-1 `en`, 639-3 `eng`,"
                          " or with a script, `eng_Latn`)")
    if len(base) == 2:
        base = CLD2_CODES.get(base, base)
        if base not in ISO_639_1_TO_3:
            raise ConfigError(f"{where}: {name!r}: unknown ISO 639-1 code {base!r}")
        base = ISO_639_1_TO_3[base]
    elif base != UNDETERMINED and base not in ISO_639_3_TO_1:
        _check_three_letter(base, name, where)
    script = None
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha() and script is None:
            script = part[0].upper() + part[1:].lower()
            if not _SCRIPT.fullmatch(script):
                raise ConfigError(f"{where}: {name!r}: {part!r} is not an ISO 15924 script code (`Latn`)")
            # detection does not tell simplified from traditional Han: both are `Hani` in labels
            script = _HAN.get(script, script)
        elif not ((len(part) == 2 and part.isalpha()) or (len(part) == 3 and part.isdigit())):
            # a region (`US`, `419`) is ignored, anything else is a mistake
            raise ConfigError(f"{where}: {name!r}: {part!r} is neither a script (`Latn`) nor a region (`US`)")
    return LanguageName(base, script)


def _check_three_letter(code: str, name: str, where: str) -> None:
    """A 639-3 code no shipped table knows is kept (the standard has ~7,900), with one warning line."""
    from thresher.quality.fineweb2_table import load_table  # FineWeb-2's 1,929 pairs, read once per process

    known = {key.partition("_")[0] for key in load_table(None).pairs}
    if code not in known:
        log.warning("%s: %r: ISO 639-3 code %r is in no table thresher ships (no detector may name it)",
                    where, name, code)


def parse_languages(names: tuple[str, ...] | list[str], where: str) -> tuple[str, ...]:
    """Canonical keys of user-written names, sorted and unique; two names of one language are an error."""
    seen: dict[str, str] = {}
    for name in names:
        key = parse_language(name, where).key
        if key in seen and seen[key] != name:
            raise ConfigError(f"{where}: {seen[key]!r} and {name!r} name the same language ({key})")
        seen[key] = name
    return tuple(sorted(seen))
