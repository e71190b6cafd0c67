"""The dataset loader: every verb that reads a dataset (`verify`, `check`, `compare`, `report`,
`explain`) opens it here, and every defect it finds is a `DatasetError` of one line naming the
file and what is wrong with it, never a traceback.

- `open_dataset` reads the manifest through `thresher.write.manifest.load_manifest` (missing, not
  JSON, not an object, a field of the wrong type: `manifest_defect`) and refuses a folder holding
  a shard or vector file the manifest does not list (a reader going by the manifest and one
  globbing the folder would see two datasets).
- `Dataset.stats` reads `stats.json` (an object whose counters are counts), falling back on the
  manifest's totals for a dataset written before `stats.json` existed.
- `Dataset.index` opens the document index (`thresher.report.index`: a header checked field by
  field, each bucket checked against its size and digest before a lookup reads it).
- `Dataset.problems` is `verify`: every file the dataset holds, listed or not — the shards and
  vector files against the manifest, `stats.json`, each index file against `index.json` and no
  file in `index/` beyond them, and `samples.jsonl.gz` decoded. Files thresher does not name
  (`report.html`, the user's notes) are the user's and are not judged.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.core.errors import DatasetError
from thresher.write.manifest import MANIFEST, ShardProblem, _store, load_manifest
from thresher.write.storage import LocalStore, Store

STATS = "stats.json"
SAMPLES = "samples.jsonl.gz"


@dataclass(frozen=True, slots=True)
class Dataset:
    """A dataset whose manifest was read and checked."""

    location: str
    store: Store
    manifest: dict[str, Any]

    def where(self, rel: str) -> str:
        return self.store.locate(rel)

    @property
    def local_root(self) -> Path:
        """The folder of a local dataset (the index and `explain` read files directly)."""
        if not isinstance(self.store, LocalStore):
            raise DatasetError(f"{self.location}: this command reads a local dataset folder, not a URL")
        return Path(self.store.root)

    def stats(self) -> dict[str, Any]:
        """`stats.json`, checked; the manifest's totals for a dataset without one."""
        stats, problem = self._read_stats()
        if problem is not None:
            raise DatasetError(f"{self.where(STATS)}: {problem}")
        return stats

    def _read_stats(self) -> tuple[dict[str, Any], str | None]:
        try:
            with self.store.open(STATS) as f:
                raw = f.read()
        except FileNotFoundError:
            return dict(self.manifest.get("stats") or {}), None
        except OSError as exc:
            return {}, f"unreadable: {exc}"
        try:
            stats = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return {}, f"not valid JSON ({exc}); the file is damaged"
        return (stats, None) if (defect := stats_defect(stats)) is None else ({}, defect)

    def index(self) -> Any:
        """The document index (`thresher.report.index.DocumentIndex`), its header checked."""
        from thresher.report.index import DocumentIndex

        try:
            return DocumentIndex(self.local_root)
        except FileNotFoundError as exc:
            raise DatasetError(
                f"{self.location}: no document index (built by an older thresher; rebuild to use explain)"
            ) from exc

    def problems(self, records: bool = False) -> list[ShardProblem]:
        """Every problem with every file the dataset holds (empty: intact)."""
        from thresher.write.dataset_checks import check_dataset

        _, problems = check_dataset(self.store, records=records)
        _, stats_problem = self._read_stats()
        if stats_problem is not None:
            problems.append(ShardProblem(STATS, stats_problem))
        problems += self._index_problems()
        problems += self._sample_problems()
        return problems

    def _index_problems(self) -> list[ShardProblem]:
        from thresher.report.index import INDEX_DIR, INDEX_FILE, header_defect

        if not isinstance(self.store, LocalStore):
            return []  # the index is read where `explain` reads it: in a local folder
        names = [rel.rpartition("/")[2] for rel in self.store.files(f"{INDEX_DIR}/")]
        if not names:
            return []  # an older thresher wrote none: explain says so
        header_rel = f"{INDEX_DIR}/index.json"
        try:
            with self.store.open(header_rel) as f:
                header = json.loads(f.read().decode("utf-8"))
        except FileNotFoundError:
            return [ShardProblem(header_rel, "missing (the index's files are there without their header)")]
        except (OSError, ValueError) as exc:
            return [ShardProblem(header_rel, f"not a readable index header: {exc}")]
        defect = header_defect(header)
        if defect is not None:
            return [ShardProblem(header_rel, defect)]
        index = self.index()
        expected = set(index.bucket_names())
        problems = [ShardProblem(f"{INDEX_DIR}/{name}", problem) for name in sorted(expected)
                    if (problem := index.bucket_problem(name)) is not None]
        problems += [ShardProblem(f"{INDEX_DIR}/{name}", "a file the index header does not count"
                                  if INDEX_FILE.match(name) else "not an index file")
                     for name in sorted(set(names) - expected - {"index.json"})]
        return problems

    def _sample_problems(self) -> list[ShardProblem]:
        try:
            with self.store.open(SAMPLES) as raw, gzip.open(raw, "rb") as f:
                for n, line in enumerate(f, 1):
                    if not isinstance(json.loads(line), dict):
                        return [ShardProblem(SAMPLES, f"line {n} is not a JSON object")]
        except FileNotFoundError:
            return []
        except (OSError, EOFError, ValueError) as exc:
            return [ShardProblem(SAMPLES, f"damaged: {exc}")]
        return []


def stats_defect(stats: Any) -> str | None:
    """What makes a parsed `stats.json` unusable (None: its counters are counts)."""
    if not isinstance(stats, dict):
        return f"not the build's statistics: a JSON {type(stats).__name__}, not an object"
    counters = stats.get("counters", {})
    if not isinstance(counters, dict):
        return "counters is not an object"
    for key, value in counters.items():
        if not isinstance(value, int) or isinstance(value, bool):
            return f"counter {key!r} is {value!r}, not a count"
    for key in ("timings_s", "histograms"):
        if key in stats and not isinstance(stats[key], dict):
            return f"{key} is not an object"
    return None


def open_dataset(location: str | Path, *, whole: bool = True) -> Dataset:
    """The dataset at `location` (a folder or a URL), its manifest checked and, with `whole`, no
    shard or vector file beside it that the manifest does not list (`verify` lists those itself)."""
    from thresher.write.dataset_checks import unlisted_files

    store = _store(location)
    manifest = load_manifest(store)
    unlisted = unlisted_files(store, manifest) if whole else []
    if unlisted:
        first = unlisted[0]
        more = f" (and {len(unlisted) - 1} more)" if len(unlisted) > 1 else ""
        raise DatasetError(f"{store.locate(first.shard)}: {first.problem}{more}; run thresher verify")
    return Dataset(str(location), store, manifest)


__all__ = ["MANIFEST", "Dataset", "open_dataset", "stats_defect"]
