"""Embeddings beside the shards and semantic deduplication over them.

`encoder` defines the `Encoder` protocol and the registry of encoders by name; `stub` is a
deterministic hashing encoder for tests; `static` is the packaged WordLlama static-embedding model
(no torch). `batched` plans batches on real token lengths (`thresher.batching`), `vectors` writes
and checks the per-shard vector files and their manifest entry, `semantic` is SemDeDup-style
deduplication over an embedded dataset. Everything third-party is imported inside functions.
"""
