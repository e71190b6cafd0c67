"""Sharded, checksummed output: shards, manifest, dataset card."""
