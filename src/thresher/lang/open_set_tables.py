"""The open-set gate's n-gram score tables (flat rows), built when this module is imported.

The pool engine's fork server imports this module before it forks any worker when a build's language
stage is the cascade (`thresher.pipeline.fork_server_preloads`), beside `thresher.lang.lingua_models`.
The gate (`thresher.lang.open_set`) reads the n-gram model's tables in their flat form
(`thresher.lang.ngram._FlatScorer`): one buffer per script group, whose pages the workers share and
never write, so the tables cost the build one copy (~11 MiB) whatever the corpus. Results do not change.
"""

from __future__ import annotations

from thresher.lang.ngram import preload

preload(flat=True)
