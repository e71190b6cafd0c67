"""Settings of the language stage (`[lang]` in a config file)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting
from thresher.lang.labels import parse_languages

Detector = Literal["auto", "cascade", "ngram", "script", "fasttext", "wide"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LangConfig:
    enabled: bool = setting(True, "identify each document's language (writes lang.code, lang.score, lang.script)")
    detector: Detector = setting(
        "auto",
        "auto: CLD2 + lingua when the lang extra is installed, else the built-in n-gram model; cascade:"
        " require the extra; ngram: the built-in model (standard library only); script: the writing system only;"
        " fasttext: the fastText model --lang-model names (lid.176, GlotLID, OpenLID; the fasttext extra);"
        " wide: the cascade, then heliport's 242 languages for what it leaves und (the wide extra, ~880 MiB)",
    )
    model: str | None = setting(
        None, "fastText language-ID model file (.bin/.ftz) read by --lang-detector fasttext (alone), or by the"
        " cascade in lingua's place; given alone, it selects the fasttext detector", flag="--lang-model",
    )
    languages: tuple[str, ...] | None = setting(
        None, "keep only documents in these languages (comma-separated codes, e.g. en,de)", flag="--languages"
    )
    min_score: float | None = setting(
        None, "drop documents whose language score is below this (FineWeb keeps en at 0.65)",
        flag="--min-language-score",
    )
    keep_undetermined: bool = setting(
        False, "with --languages, keep documents whose language is und (no letters, unknown language)"
    )
    top_k: int = setting(3, "how many languages lang.alternatives lists, the detected one included")
    max_chars: int = setting(
        2048, "characters of prose read per document (the first ones; CLD2 costs ~50 us per 1,000)"
    )
    spans: bool = setting(True, "write lang.spans (paragraph ranges and their languages) for mixed documents")

    def __post_init__(self) -> None:
        if self.detector == "auto":
            # resolved here, so the config the manifest records and hashes names the detector that
            # ran: the same command on a machine without the extra is a different config (a resume
            # there is refused) rather than silently different output
            from thresher.lang.cascade import cld2_available

            if self.model is not None:
                object.__setattr__(self, "detector", "fasttext")
            else:
                object.__setattr__(self, "detector", "cascade" if cld2_available() else "ngram")
        if self.detector == "fasttext" and not self.model:
            raise ValueError("lang.detector = fasttext needs a model file: --lang-model PATH (.bin/.ftz)")
        if self.model is not None and self.detector not in ("fasttext", "cascade"):
            raise ValueError(f"--lang-model is read by --lang-detector fasttext or cascade, not {self.detector}")
        if self.languages is not None:
            names = tuple(c for c in self.languages if c.strip())
            object.__setattr__(self, "languages", parse_languages(names, "lang.languages"))
        if self.min_score is not None and not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"lang.min_score must be within [0, 1], got {self.min_score}")
        if self.top_k < 1:
            raise ValueError("lang.top_k must be at least 1")
        if self.max_chars < 16:
            raise ValueError("lang.max_chars must be at least 16")
        if not self.enabled and (self.languages or self.min_score is not None):
            raise ValueError("lang.languages and lang.min_score need the language stage (lang.enabled)")

    @property
    def fasttext_model(self) -> str | None:
        """The fastText model file the stage reads, when it runs and reads one."""
        return self.model if self.enabled and self.detector in ("fasttext", "cascade") else None

    @property
    def filters(self) -> bool:
        return bool(self.languages) or self.min_score is not None
