"""Quality settings: which rule sets run (the preset) and every rule's thresholds.

Presets choose rule sets; they never change a threshold, so each threshold has one default,
declared in its rule set's config beside the rules. `None` switches a single rule off.

| preset    | rule sets, in order                                                              |
|-----------|----------------------------------------------------------------------------------|
| `default` | urls, gopher, repetition, c4_lines, c4, fineweb, bad_words (FineWeb's recipe)    |
| `gopher`  | gopher, repetition                                                               |
| `c4`      | urls, c4_lines + c4_terminal_punctuation, c4, bad_words                          |
| `fineweb` | urls, gopher, repetition, c4_lines, c4, fineweb                                  |
| `fineweb2`| urls, fineweb2 (FineWeb-2's filters, thresholds per language-script pair)          |
| `all`     | every rule set but fineweb2, c4_terminal_punctuation and statistical included    |

`urls` runs only when a block list or URL word list is configured, `bad_words` only when
`bad_words.directory` is set: thresher ships no list and downloads none.

`by_language` overrides thresholds for documents of one language (their `lang.code`), e.g.

    [quality.by_language.de.gopher]
    min_words = 30

Overrides change thresholds only: the preset, the rule sets, `assume_language` and the list
directories stay those of the whole build (`thresher.lang.routing` runs the routed stages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from thresher.core.config import from_dict, merge, section, setting, to_dict
from thresher.core.errors import ConfigError
from thresher.quality.badwords import BadWordsConfig
from thresher.quality.c4 import C4Config
from thresher.quality.fineweb import FineWebConfig
from thresher.quality.fineweb2 import Fineweb2Config
from thresher.quality.gopher import GopherQualityConfig
from thresher.quality.repetition import GopherRepetitionConfig
from thresher.quality.statistical import StatisticalConfig
from thresher.quality.urls import UrlFilterConfig

RULE_SETS = (
    "urls", "gopher", "repetition", "c4_lines", "c4_terminal_punctuation", "c4", "fineweb", "fineweb2", "statistical",
    "bad_words",
)

PRESETS: dict[str, tuple[str, ...]] = {
    "default": ("urls", "gopher", "repetition", "c4_lines", "c4", "fineweb", "bad_words"),
    "gopher": ("gopher", "repetition"),
    "c4": ("urls", "c4_lines", "c4_terminal_punctuation", "c4", "bad_words"),
    "fineweb": ("urls", "gopher", "repetition", "c4_lines", "c4", "fineweb"),
    "fineweb2": ("urls", "fineweb2"),
    # every rule set but fineweb2, which judges with other thresholds what gopher, repetition and fineweb judge
    "all": tuple(s for s in RULE_SETS if s != "fineweb2"),
}

Preset = Literal["default", "gopher", "c4", "fineweb", "fineweb2", "all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QualityConfig:
    preset: Preset | None = setting(
        "default", "quality rule preset: default, gopher, c4, fineweb, fineweb2, all (none disables quality filtering)",
        flag="--quality",
    )
    rule_sets: tuple[str, ...] | None = setting(
        None, f"run exactly these rule sets instead of the preset's ({', '.join(RULE_SETS)})"
    )
    assume_language: str | None = setting(
        None, "language code assumed for stop words and bad words when a document has no lang.code"
    )
    gopher: GopherQualityConfig = section(GopherQualityConfig, "Gopher quality rules")
    repetition: GopherRepetitionConfig = section(GopherRepetitionConfig, "Gopher repetition rules")
    c4: C4Config = section(C4Config, "C4 line cleanup and document rules")
    fineweb: FineWebConfig = section(FineWebConfig, "FineWeb quality rules")
    fineweb2: Fineweb2Config = section(Fineweb2Config, "FineWeb-2's per-language filters")
    statistical: StatisticalConfig = section(StatisticalConfig, "character entropy and mean sentence length")
    urls: UrlFilterConfig = section(UrlFilterConfig, "URL block lists and banned URL words")
    bad_words: BadWordsConfig = section(BadWordsConfig, "per-language bad-word lists (LDNOOBW format)")
    by_language: Any = setting(
        None, "threshold overrides per language code, as in [quality.by_language.de.gopher] (on the command"
        " line a JSON object: {\"de\": {\"gopher\": {\"min_words\": 30}}})"
    )

    def __post_init__(self) -> None:
        if self.by_language is not None:
            object.__setattr__(self, "by_language", _checked_overrides(self.by_language))
        if self.rule_sets is not None:
            from thresher.quality.rule_sets import RULE_SETS as REGISTRY  # built-ins and plugins

            unknown = [s for s in self.rule_sets if s not in REGISTRY]
            if unknown:
                raise ValueError(f"unknown quality rule set {unknown[0]!r} (known: {', '.join(REGISTRY.names())})")

    @property
    def active_rule_sets(self) -> tuple[str, ...]:
        """The rule sets to run, in pipeline order."""
        if self.rule_sets is not None:
            chosen = set(self.rule_sets)
            plugins = tuple(dict.fromkeys(s for s in self.rule_sets if s not in RULE_SETS))  # after the built-ins
            return tuple(s for s in RULE_SETS if s in chosen) + plugins
        if self.preset is None:
            return ()
        return PRESETS[self.preset]

    def for_language(self, code: str) -> QualityConfig:
        """This config with the overrides of language `code` applied (itself when there are none)."""
        overrides = self.by_language or {}
        override = overrides.get(code)
        if override is None and code:  # a name in another form (`de` for the key `deu`)
            from thresher.lang.labels import parse_language

            override = overrides.get(parse_language(code, "quality.by_language").key)
        if not override:
            return self
        base = to_dict(self)
        base.pop("by_language")
        cfg: QualityConfig = from_dict(QualityConfig, merge(base, _thaw(override)), f"quality.by_language.{code}")
        return cfg


# Sections an override may change: thresholds, not which rule sets run or where lists come from.
_OVERRIDABLE = ("gopher", "repetition", "c4", "fineweb")


class FrozenMapping(dict):  # type: ignore[type-arg]
    """A dict that refuses changes and hashes, so a frozen config holding one stays immutable;
    still a dict for `to_dict`, TOML and JSON."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("config mappings are immutable")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(json.dumps(self, sort_keys=True))


def _freeze(value: Any) -> Any:
    return FrozenMapping({k: _freeze(v) for k, v in value.items()}) if isinstance(value, dict) else value


def _thaw(value: Any) -> Any:
    return {k: _thaw(v) for k, v in value.items()} if isinstance(value, dict) else value


def _checked_overrides(value: Any) -> FrozenMapping:
    from thresher.lang.labels import parse_language

    if isinstance(value, str):  # from the command line
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"quality.by_language: not a JSON object: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"quality.by_language: expected a table of language codes, got {value!r}")
    checked: dict[str, Any] = {}
    written: dict[str, str] = {}
    for code, override in value.items():
        where = f"quality.by_language.{code}"
        # `en`, `eng` and `eng_Latn` are accepted; the canonical key (`eng`, `eng_Latn`) is kept
        key = parse_language(str(code), "quality.by_language").key
        if key in written and written[key] != code:
            raise ConfigError(f"quality.by_language: {written[key]!r} and {code!r} name the same language ({key})")
        written[key] = code
        if not isinstance(override, dict):
            raise ConfigError(f"{where}: expected a table of sections, got {override!r}")
        unknown = sorted(set(override) - set(_OVERRIDABLE))
        if unknown:
            raise ConfigError(f"{where}: {unknown[0]!r} cannot be set per language (only {', '.join(_OVERRIDABLE)})")
        from_dict(QualityConfig, override, where)  # every key and value checked now, not mid-build
        checked[key] = override
    frozen: FrozenMapping = _freeze(checked)
    return frozen
