"""The last step of a build: `stats.json`, the rejects files, the card and the manifest (last).

The manifest is built by `thresher.write.manifest.build_manifest`, beside the code that reads it.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.config import RunConfig
from thresher.core.config import to_dict
from thresher.core.stats import Stats
from thresher.paths import input_size, is_url, local_path
from thresher.read.base import Partition
from thresher.run.integrity import require_work_files
from thresher.run.observe import CARD, CARD_DROPPED, card_summary
from thresher.run.results import ShardFile
from thresher.run.safety import CARD_FILE, previous_shards
from thresher.run.workdir import WorkDir
from thresher.stage_hooks import extractor_record, manifest_records
from thresher.write.atomic import atomic_open, dumps_json
from thresher.write.card import render_card
from thresher.write.formats import get_format, hub_features
from thresher.write.hub import REJECT_FEATURES, HubConfig, front_matter
from thresher.write.manifest import MANIFEST, build_manifest
from thresher.write.storage import LocalStore, Store, open_store


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """What a finished build hands to `finalize`."""

    config: RunConfig
    inputs: Sequence[str]  # as given (`-` for standard input)
    partitions: Sequence[Partition]
    shards: Sequence[ShardFile]
    stats: Stats
    # the manifest's sections the phased corpus stages added, by key (`embeddings`: the vector files)
    sections: dict[str, Any] = field(default_factory=dict)
    # the files the build wrote beside the shards (vectors, signals): never removed as stale
    beside: Sequence[ShardFile] = ()


def remove_stale_shards(out: Store, shards: Sequence[ShardFile], previous: Sequence[str]) -> None:
    """The shards the previous dataset's manifest listed that this build did not produce; no other
    file is deleted (`thresher.run.safety`)."""
    keep = {s.path for s in shards}
    for stale in previous:
        if stale not in keep:
            out.remove(stale)


# what finalize writes into the output and the rejects folder, each through a temp file
# `.NAME.tmp-PID` (`thresher.write.atomic`) that a kill part-way leaves behind
_WRITTEN = re.compile(
    r"^\.(?:stats\.json|README\.md|manifest\.json|samples\.jsonl\.gz|[a-z_]+\.jsonl\.gz"
    r"|(?:ids|urls)-[0-9a-f]{4}\.jsonl\.gz|index\.json)\.tmp-\d+$"
)


def remove_killed_writes(out: Store, rejects: str | Path | None) -> None:
    """The temp files of finalize's writes that an earlier, killed finalize left in the output, its
    `index/` and the rejects folder: the build holds the output's lock, so none is being written."""
    folders = [Path(out.root), Path(out.root) / "index"] if isinstance(out, LocalStore) else []
    if rejects is not None and not is_url(str(rejects)):
        folders.append(Path(local_path(str(rejects))))
    for folder in folders:
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if _WRITTEN.match(entry.name) and entry.is_file() and not entry.is_symlink():
                entry.unlink(missing_ok=True)


def write_rejects(work: WorkDir, partitions: Sequence[Partition], rejects: str | Path) -> None:
    """Every dropped document (scan and write phases), every malformed record and every record a phased
    stage wrote for the rejects (`WorkDir.stage_rejects`), gzipped."""
    rejects_store = open_store(rejects)
    local = isinstance(rejects_store, LocalStore)
    rejects_dir = rejects_store.root if isinstance(rejects_store, LocalStore) else work.path("rejects-out")
    rejects_dir.mkdir(parents=True, exist_ok=True)
    sources = []
    for p in partitions:
        sources += [work.scan_rejects(p.index), work.write_rejects(p.index)]
    gzip_concat(sources, rejects_dir / "rejects.jsonl.gz")
    gzip_concat([work.scan_malformed(p.index) for p in partitions], rejects_dir / "malformed.jsonl.gz")
    names = ["rejects.jsonl.gz", "malformed.jsonl.gz"]
    # records of a kind a phased stage adds (line dedup's removed spans), partition by partition and,
    # within one, stage by stage (by name: the order does not depend on which ran first)
    kinds = work.path("stage-rejects")
    for kind in sorted(d.name for d in kinds.iterdir()) if kinds.is_dir() else ():
        files = [f for p in partitions for f in sorted((kinds / kind).glob(f"p{p.index:06d}.*.jsonl"))]
        gzip_concat(files, rejects_dir / f"{kind}.jsonl.gz")
        names.append(f"{kind}.jsonl.gz")
    if not local:  # compressed in the work dir, then uploaded
        for name in names:
            rejects_store.put_file(rejects_dir / name, name)


def write_observations(out: Store, work: WorkDir, partitions: Sequence[Partition], documents: int) -> None:
    """`index/` (every document by id and URL, for `thresher explain`) and `samples.jsonl.gz` (a
    few dropped documents per rule, for `thresher report`) from the tasks' observations."""
    from thresher.report.index import INDEX_DIR, INDEX_FILE, IndexWriter
    from thresher.run.observe import iter_index_parts, merge_samples

    parts = [work.observed(phase, p.index, "index") for phase in ("scan", "write") for p in partitions]
    staged = work.path("observed-out")
    # a finalize a kill stopped left part files the writer would append to: start them afresh
    shutil.rmtree(work.path("index-parts"), ignore_errors=True)
    shutil.rmtree(staged, ignore_errors=True)
    writer = IndexWriter(work.path("index-parts"), documents)
    for id_json, url_json, line in iter_index_parts(parts):
        writer.add_raw(id_json, url_json, line)
    index_dir = writer.finish(staged)
    merge_samples([work.observed(phase, p.index, "samples") for phase in ("scan", "write") for p in partitions],
                  staged / SAMPLES)
    written = sorted(index_dir.iterdir())
    for path in written:
        out.put_file(path, f"{INDEX_DIR}/{path.name}")
    names = {p.name for p in written}
    for stale in out.files(f"{INDEX_DIR}/"):  # a previous dataset's buckets beyond this one's count
        if stale.rpartition("/")[2] not in names and INDEX_FILE.match(stale.rpartition("/")[2]):
            out.remove(stale)
    out.put_file(staged / SAMPLES, SAMPLES)


SAMPLES = "samples.jsonl.gz"
CARD_COUNTER_PREFIXES = (f"{CARD}/", f"{CARD_DROPPED}/")


def finalize(out: Store, work: WorkDir, done: Finished, rejects: str | Path | None) -> dict[str, Any]:
    """Write the dataset's metadata files into `out`, the manifest last (its presence means the
    dataset is complete), and return the manifest."""
    config = done.config
    needed = [work.scan_malformed(p.index) for p in done.partitions]
    if rejects is not None:
        needed += [f(p.index) for p in done.partitions for f in (work.scan_rejects, work.write_rejects)]
    require_work_files(needed, "finalize")  # a lost one would leave the rejects silently incomplete
    remove_stale_shards(out, [*done.shards, *done.beside], previous_shards(work))
    remove_killed_writes(out, rejects)
    stats_dict = done.stats.to_dict()
    # the card's text counters are bookkeeping for the card (`observe.card_summary`), not statistics
    stats_dict["counters"] = {
        k: v for k, v in stats_dict["counters"].items() if not k.startswith(CARD_COUNTER_PREFIXES)
    }
    stats_dict["malformed_examples"] = malformed_examples(work, [p.index for p in done.partitions])
    out.write_bytes("stats.json", dumps_json(stats_dict).encode("utf-8"))
    if rejects is not None:
        write_rejects(work, done.partitions, rejects)
    write_observations(out, work, done.partitions, done.stats.seen)
    manifest = build_manifest(
        fmt=config.output.format,
        shards=[s.to_json() for s in done.shards],
        config_hash=config.hash,
        config=to_dict(config, hashed_only=True),
        extractor=extractor_record(config),
        inputs=[{"path": p, "bytes": input_size(p) if p != "-" else None} for p in done.inputs],
        stats=stats_dict,
    )
    manifest.update(manifest_records(config))  # e.g. the classifiers a build ran, with their sha256
    for key, section in done.sections.items():
        manifest[key] = section
    if config.output.partition_by == "language":
        from thresher.write.partitions import write_partitions

        manifest["partitions"] = write_partitions(out, work.path("partitions"), manifest,
                                                  shard_max_records=config.output.shard_max_records,
                                                  compression_level=config.output.compression_level)
    summary = card_summary(done.stats.counters)
    card = dataset_card(out, config, manifest, render_card(manifest, stats_dict, summary), rejects)
    # the card just before the manifest: a build removes the previous one first (`run.safety.remove_own_card`),
    # so a folder whose build is unfinished has no card whose `configs` would make it load as complete
    out.write_bytes(CARD_FILE, card.encode("utf-8"))
    out.write_bytes(MANIFEST, dumps_json(manifest).encode("utf-8"))
    return manifest


def dataset_card(out: Store, config: RunConfig, manifest: dict[str, Any], text: str, rejects: str | Path | None) -> str:
    """The card: the format's Markdown after the `configs` front matter naming the shards (and the rejects
    files when they are written inside the dataset folder), unless the format wrote a front matter itself."""
    fmt = get_format(config.output.format, config.output.compression_level)
    body = fmt.card(text)
    if body.startswith("---\n"):
        return body
    shards = [s["path"] for s in manifest["shards"]]
    features = hub_features(fmt)
    configs = [HubConfig("default", tuple(shards), features=features)]
    if manifest.get("partitions"):
        from thresher.write.partitions import partition_configs

        configs += partition_configs(manifest)
    inside = rejects_inside(out, rejects)
    if inside is not None:  # the rejects are JSON Lines whatever the format
        configs += [
            HubConfig("rejects", (f"{inside}rejects.jsonl.gz",), features=REJECT_FEATURES),
            HubConfig("malformed", (f"{inside}malformed.jsonl.gz",)),
        ]
    return front_matter(configs) + "\n" + body


def rejects_inside(out: Store, rejects: str | Path | None) -> str | None:
    """The rejects folder's path relative to a local dataset folder that holds it (`""` for the folder
    itself, else ending in `/`), or None."""
    if rejects is None or not isinstance(out, LocalStore) or is_url(str(rejects)):
        return None
    folder = Path(local_path(str(rejects))).resolve()
    root = Path(out.root).resolve()
    if not folder.is_relative_to(root):
        return None
    return "" if folder == root else folder.relative_to(root).as_posix() + "/"


def malformed_examples(work: WorkDir, partitions: list[int], limit: int = 50) -> list[dict[str, Any]]:
    """The first `limit` malformed-input records of the partitions, in partition order (for `stats.json`)."""
    out: list[dict[str, Any]] = []
    for p in partitions:
        path = work.scan_malformed(p)
        if not path.exists():
            continue
        with open(path, "rb") as f:
            for line in f:
                out.append(json.loads(line))
                if len(out) >= limit:
                    return out
    return out


def gzip_concat(sources: list[Path], dest: Path) -> None:
    """Compress text files into one gzip file (deterministic header)."""
    with atomic_open(dest, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        for src in sources:
            if src.exists():
                with open(src, "rb") as f:
                    while chunk := f.read(1 << 20):
                        gz.write(chunk)
