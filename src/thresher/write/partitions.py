"""`--partition-by language`: one complete dataset per language-script under the output.

After the shards are assembled, the build reads them once in manifest order and writes every record
again into `by-language/<label>/`, the record's canonical language label (`lang.label`: ISO 639-3
and script, `deu_Latn`, `quc_Latn`, `und_Cans`; `thresher.lang.labels`), as FineWeb-2 publishes its
subsets. Each folder is a dataset of its own: shards in the build's format
(at most `shard_max_records` each, named as the format names them), a `manifest.json` with their
sizes and sha256 (so `thresher verify` and `read_shards` accept the folder alone), and a card whose
front matter names those shards. The root manifest lists the folders under `partitions`, and the root
card adds one `configs` entry per language-script (`load_dataset(ROOT, "deu_Latn")`).

Records keep the bytes of their root shard line (`dumps_line` of the record as read) and their order
within the root dataset, and folders are written in sorted order: the partitions are a pure function
of the root shards, which are byte-identical across engines, worker counts and resumes. The records
are stored twice (root shards and partitions); a partition step killed part-way leaves no root
manifest, so the build is unfinished and its resume writes the partitions again.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from thresher.lang.labels import alias, label_of
from thresher.write.atomic import dumps_json, dumps_line
from thresher.write.formats import get_format, hub_features
from thresher.write.hub import HubConfig, front_matter
from thresher.write.manifest import MANIFEST, build_manifest, file_digest
from thresher.write.storage import LocalStore, Store

PARTITIONS_DIR = "by-language"
CARD_FILE = "README.md"
MAX_OPEN_FILES = 128  # per-partition scratch files held open at once while routing records
_UNSAFE = re.compile(r"[^A-Za-z0-9-]")


def partition_key(record: dict[str, Any]) -> str:
    """The canonical label of a record (`deu_Latn`; `und_Zyyy` without language annotations), made safe
    as a folder name."""
    code, _, script = label_of(record.get("annotations") or {}).partition("_")
    return f"{_UNSAFE.sub('-', code) or 'und'}_{_UNSAFE.sub('-', script) or 'Zyyy'}"


class _Router:
    """Appends lines to one scratch file per key, with at most `MAX_OPEN_FILES` open."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.counts: dict[str, int] = {}
        self._open: dict[str, IO[bytes]] = {}

    def add(self, key: str, line: bytes) -> None:
        f = self._open.get(key)
        if f is None:
            if len(self._open) >= MAX_OPEN_FILES:
                oldest = next(iter(self._open))
                self._open.pop(oldest).close()
            f = self._open[key] = open(self.folder / f"{key}.jsonl", "ab")
        f.write(line)
        self.counts[key] = self.counts.get(key, 0) + 1

    def close(self) -> None:
        for f in self._open.values():
            f.close()
        self._open.clear()


def _split(path: Path, size: int, total: int) -> list[Path]:
    """The scratch file as pieces of at most `size` lines (the file itself when it fits)."""
    if total <= size:
        return [path]
    pieces: list[Path] = []
    with open(path, "rb") as f:
        out: IO[bytes] | None = None
        for i, line in enumerate(f):
            if i % size == 0:
                if out is not None:
                    out.close()
                pieces.append(path.with_name(f"{path.stem}.{len(pieces):06d}.piece"))
                out = open(pieces[-1], "wb")
            assert out is not None
            out.write(line)
        if out is not None:
            out.close()
    return pieces


_KILLED_WRITE = re.compile(r"^\.[^/]+\.tmp-\d+$")  # `thresher.write.atomic`'s temp file of an unfinished write


def _remove_killed_writes(out: Store, folder: str) -> None:
    """The temp files a killed partition step left in a local folder (the build holds the output's
    lock, so none is being written)."""
    if not isinstance(out, LocalStore):
        return
    path = Path(out.root) / folder
    for entry in path.iterdir() if path.is_dir() else ():
        if _KILLED_WRITE.match(entry.name) and entry.is_file() and not entry.is_symlink():
            entry.unlink(missing_ok=True)


def partition_files(section: dict[str, Any]) -> list[str]:
    """Every file a manifest's `partitions` section names, relative to the root dataset."""
    out: list[str] = []
    for dataset in section.get("datasets") or []:
        folder = dataset.get("path") if isinstance(dataset, dict) else None
        if not isinstance(folder, str):
            continue
        out += [f"{folder}/{rel}" for rel in (*(dataset.get("shards") or []), MANIFEST, CARD_FILE)
                if isinstance(rel, str)]
    return out


def write_partitions(
    out: Store,
    scratch: Path,
    manifest: dict[str, Any],
    *,
    shard_max_records: int,
    compression_level: int,
    on_record: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Write the partitions of the dataset whose (not yet written) root manifest is `manifest`, and
    return the root manifest's `partitions` section."""
    fmt = get_format(manifest["format"], compression_level)
    shutil.rmtree(scratch, ignore_errors=True)
    (scratch / "lines").mkdir(parents=True)
    (scratch / "shards").mkdir()
    router = _Router(scratch / "lines")
    try:
        for entry in manifest["shards"]:
            with out.open(entry["path"]) as raw:
                for record in fmt.read(raw):
                    router.add(partition_key(record), dumps_line(record))
                    if on_record is not None:
                        on_record()
    finally:
        router.close()
    datasets = []
    for key in sorted(router.counts):
        total = router.counts[key]
        pieces = _split(scratch / "lines" / f"{key}.jsonl", shard_max_records, total)
        folder = f"{PARTITIONS_DIR}/{key}"
        _remove_killed_writes(out, folder)
        shards = []
        for i, chunk in enumerate(pieces):
            name = fmt.shard_name(i, len(pieces))
            local = scratch / "shards" / f"{key}.{i:06d}"
            records = fmt.assemble([chunk], local)
            size, sha256 = file_digest(local)
            out.put_file(local, f"{folder}/{name}")
            local.unlink()
            shards.append({"path": name, "records": records, "bytes": size, "sha256": sha256})
        code, _, script = key.partition("_")
        sub = build_manifest(fmt=manifest["format"], shards=shards, config_hash=manifest["config_hash"],
                             config=manifest["config"], extractor=manifest["extractor"], inputs=manifest["inputs"],
                             stats={"seen": total, "kept": total, "dropped": 0, "malformed": 0})
        sub["partition"] = {"by": "language", "label": key, "language": code, "alias": alias(code), "script": script,
                            "parent": "../.."}
        card = _card(fmt, key, code, script, shards, total)
        out.write_bytes(f"{folder}/{CARD_FILE}", card.encode("utf-8"))
        body = dumps_json(sub).encode("utf-8")
        out.write_bytes(f"{folder}/{MANIFEST}", body)  # last: the folder is then a complete dataset
        datasets.append({"path": folder, "label": key, "language": code, "alias": alias(code), "script": script,
                         "records": total,
                         "shards": [s["path"] for s in shards], "manifest_sha256": hashlib.sha256(body).hexdigest()})
    shutil.rmtree(scratch, ignore_errors=True)
    return {"by": "language", "folder": PARTITIONS_DIR, "datasets": datasets}


def _card(fmt: Any, key: str, code: str, script: str, shards: Sequence[dict[str, Any]], total: int) -> str:
    body = fmt.card(
        f"# {key}\n\n{total} documents whose detected language is `{code}` (ISO 639-3; `lang.code`"
        f" `{alias(code)}`) written in the `{script}` script (`lang.script`), label `{key}` (`lang.label`):"
        " one partition of the dataset two folders up, built with"
        " `--partition-by language`. Its card describes how the documents were made; this folder is a"
        " complete dataset of its own (`manifest.json` lists the shards with their sha256).\n"
    )
    if body.startswith("---\n"):
        return str(body)
    config = HubConfig("default", tuple(s["path"] for s in shards), features=hub_features(fmt))
    return front_matter([config]) + "\n" + str(body)


def partition_configs(manifest: dict[str, Any]) -> list[HubConfig]:
    """The root card's `configs` entries, one per partition (after `default`)."""
    section = manifest.get("partitions") or {}
    fmt = get_format(manifest["format"])
    return [HubConfig(d["path"].rpartition("/")[2], tuple(f"{d['path']}/{s}" for s in d["shards"]),
                      features=hub_features(fmt)) for d in section.get("datasets") or []]
