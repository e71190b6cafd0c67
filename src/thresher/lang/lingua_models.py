"""lingua's language models, all loaded when this module is imported.

The pool engine's fork server imports this module before it forks any worker when a build's language
stage is the cascade (`thresher.pipeline.fork_server_preloads`). The workers then start with every
model the cascade could ask for already in memory, in pages they share with the fork server and
with each other (nothing writes to them), instead of each worker loading its own copy language by
language as the corpus brings them: a worker's memory is then flat from its first document rather
than growing toward ~77 MiB of models over a multilingual corpus (issue 29). Loading them all takes
~0.45 CPU s, in the fork server, once per build. Results do not change: a model loaded early is the
model loaded late.
"""

from __future__ import annotations

from typing import Any

_loaded: list[Any] = []  # the detector that holds the models, kept for the life of the process


def load_all(accurate: bool = False) -> bool:
    """Load every language model of lingua's low-accuracy (or high-accuracy) mode; False when the
    lang extra is not installed."""
    try:
        from lingua import LanguageDetectorBuilder
    except ImportError:
        return False
    builder = LanguageDetectorBuilder.from_all_languages()
    if not accurate:
        builder = builder.with_low_accuracy_mode()
    _loaded.append(builder.with_preloaded_language_models().build())
    return True


load_all()
