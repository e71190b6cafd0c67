"""What a build's driver asks of the stages its config turns on, before the first task and after
the last: checks that fail in a second instead of in the first task, preparation done once for
every worker, and the manifest's record of what ran.

`run/` (the driver, the phases, the engines) calls these and imports no stage package for them;
a stage with such a need adds a line here, beside the stage table in `thresher.pipeline`.
"""

from __future__ import annotations

from typing import Any

from thresher.config import RunConfig


def check_stages(config: RunConfig) -> None:
    """Raise `ConfigError` for what a configured per-document stage could not run with: the
    classifiers' model files (present, intact, with the labels to keep). Part of every command's
    preflight (`thresher.run.preflight`)."""
    if config.classify.models:
        from thresher.classify.stage import resolve_classifiers

        resolve_classifiers(config.classify)
    if config.lang.fasttext_model:
        from thresher.lang.fasttext_lid import language_model_record

        language_model_record(config.lang.fasttext_model)  # the fastText language model: a fastText file, with labels


def check_corpus_stages(config: RunConfig) -> None:
    """Raise `ConfigError` for what a build's corpus stages could not run with: the embedding
    encoder (installed, loadable on its device)."""
    if config.embed.encoder_name is not None:
        from thresher.embed.encoder import check_encoder

        check_encoder(config.embed.encoder_name, config.embed.device)


def _compiles_url_lists(config: RunConfig) -> bool:
    return config.quality.urls.configured


def _decontam_index_dir(config: RunConfig) -> str | None:
    """The folder the decontamination index is compiled into, where the build compiles one."""
    return config.decontam.compiled_dir if config.decontam.enabled else None


def needs_preparation(config: RunConfig) -> bool:
    """Whether `prepare_stages` has anything to do for `config` (a pool forks a process for it only then)."""
    return _compiles_url_lists(config) or _decontam_index_dir(config) is not None


def prepare_stages(config: RunConfig) -> None:
    """Once per build, in the driver, after the plan and before the workers start: large URL lists
    are compiled into the file every worker maps (`thresher.quality.list_store`), and so is the
    benchmark n-gram index (`thresher.decontam.index_store`)."""
    if _compiles_url_lists(config):
        from thresher.quality.list_store import precompile

        precompile(config.quality.urls, config.quality.urls.compiled_dir)
    folder = _decontam_index_dir(config)
    if folder is not None:
        from thresher.decontam.index import verify_benchmarks
        from thresher.decontam.index_store import shared_index

        verify_benchmarks(config.decontam)  # the files the config names, whether or not already compiled
        shared_index(config.decontam, folder)


def extractor_record(config: RunConfig) -> dict[str, str]:
    """The manifest's `extractor`: which extractor ran and its version."""
    from thresher.extract.registry import extractor_info

    return extractor_info(config.extract)


def manifest_records(config: RunConfig) -> dict[str, Any]:
    """Sections the manifest adds for the stages that ran: the classifiers' models with their sha256,
    and the fastText language model (`lang_model`)."""
    records: dict[str, Any] = {}
    if config.classify.models:
        from thresher.classify.stage import classifier_records

        records.update(classifier_records(config.classify))
    if config.lang.fasttext_model:
        from thresher.lang.fasttext_lid import language_model_record

        records["lang_model"] = language_model_record(config.lang.fasttext_model)
    return records


def card_counter_names(annotations: dict[str, Any]) -> tuple[str, ...]:
    """Names a kept document is counted under in the dataset card beside its text and language (the
    card's Consent section: its opt-out signals, `thresher.consent`); empty for most documents. Called
    by the build's observer for every document with annotations."""
    from thresher.consent.annotations import card_names

    return card_names(annotations)
