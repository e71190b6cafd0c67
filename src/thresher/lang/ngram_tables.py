"""The n-gram model's score tables, built when this module is imported.

The pool engine's fork server imports this module before it forks any worker when a build's language
stage is the n-gram model (`thresher.pipeline.fork_server_preloads`), as `thresher.lang.lingua_models`
does for the cascade: the workers then share the tables (~0.2 CPU s and ~10 MiB to build) instead of
each building its own. Results do not change.
"""

from __future__ import annotations

from thresher.lang.ngram import preload

preload()
