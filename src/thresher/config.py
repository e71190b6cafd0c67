"""`RunConfig`: the one config tree of a build, composed of the config class beside each stage.

Precedence: declared defaults < TOML file (`--config`) < command-line flags. The resolved tree, its
hash and the package version go into the manifest, so a run can be reproduced exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.classify.config import ClassifyConfig
from thresher.consent.config import ConsentConfig
from thresher.core.config import config_hash, from_dict, merge, section, to_dict
from thresher.core.errors import ConfigError
from thresher.decontam.config import DecontamConfig
from thresher.dedup.config import DedupConfig
from thresher.embed.config import EmbedConfig
from thresher.exec_config import ExecConfig
from thresher.extract.config import ExtractConfig
from thresher.lang.config import LangConfig
from thresher.normalize.text import NormalizeConfig
from thresher.pii.config import PiiConfig
from thresher.quality.config import QualityConfig
from thresher.read.config import InputConfig
from thresher.select.config import SelectConfig
from thresher.write.config import OutputConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    input: InputConfig = section(InputConfig, "how input records are read")
    consent: ConsentConfig = section(
        ConsentConfig, "opt-out signals: robots.txt for AI crawlers, noai, TDMRep (recorded unless off)"
    )
    extract: ExtractConfig = section(ExtractConfig, "main-content extraction")
    normalize: NormalizeConfig = section(NormalizeConfig, "text normalization")
    lang: LangConfig = section(LangConfig, "language identification and language filters")
    quality: QualityConfig = section(QualityConfig, "quality filtering")
    classify: ClassifyConfig = section(ClassifyConfig, "model-based filtering (thresher classify models)")
    dedup: DedupConfig = section(DedupConfig, "duplicate removal")
    decontam: DecontamConfig = section(
        DecontamConfig, "benchmark decontamination (off unless benchmark files are given)"
    )
    pii: PiiConfig = section(PiiConfig, "personal data redaction (off unless types are given)")
    embed: EmbedConfig = section(
        EmbedConfig, "embeddings beside the shards and semantic dedup (off unless --embed or --semantic-dedup)"
    )
    select: SelectConfig = section(SelectConfig, "a token budget: the best documents by a signal (--target-tokens)")
    output: OutputConfig = section(OutputConfig, "output shards")
    exec: ExecConfig = section(ExecConfig, "execution (does not change the output)", hashed=False)

    def __post_init__(self) -> None:
        if self.output.partition_by == "language" and not (self.lang.enabled and self.output.include_annotations):
            raise ConfigError("--partition-by language needs the language stage (lang.enabled) and annotations in"
                              " the shards (output.include_annotations)")

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    @property
    def hash(self) -> str:
        digest = config_hash(self)
        if self.classify.models:
            # a model file is part of the run: its checksum enters the hash (verified on the way)
            import hashlib
            import json

            from thresher.classify.stage import resolve_classifiers

            models = [[m["name"], m["sha256"], *([m["tokenizer_sha256"]] if "tokenizer_sha256" in m else [])]
                      for m in resolve_classifiers(self.classify)]
            digest = hashlib.sha256(json.dumps([digest, models]).encode()).hexdigest()[:16]
        if self.lang.fasttext_model:
            # the language model file is part of the run too
            import hashlib

            from thresher.lang.fasttext_lid import language_model_record

            sha = language_model_record(self.lang.fasttext_model)["sha256"]
            digest = hashlib.sha256(f"{digest}:lang:{sha}".encode()).hexdigest()[:16]
        return digest

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        cfg: RunConfig = from_dict(cls, data)
        return cfg

    @classmethod
    def from_toml(cls, path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
        data = load_toml(path)
        return cls.from_dict(merge(data, overrides or {}))


def load_toml(path: str | Path) -> dict[str, Any]:
    import tomllib  # ~4 ms (its patterns compile at import), for a build given a config file only

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
