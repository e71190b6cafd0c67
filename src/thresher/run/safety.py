"""What a build may overwrite or delete, decided from files thresher itself wrote.

- A folder (prefix) is a thresher dataset only when its `manifest.json` is one thresher wrote: JSON
  with the manifest schema (`format_version`, `thresher_version`, `config_hash`, and shard entries
  with a path and a sha256). A file merely *named* `manifest.json` makes no dataset.
- A `.work` entry is thresher's only when its `plan.json` is a work plan thresher wrote, or when it
  holds nothing but what a build writes before its plan (the lock, the claimed output, standard
  input spooled). A finished build's work dir is marked, renamed aside and swept
  (`thresher.run.lifecycle`).
- A build deletes from the output only the shards the previous manifest listed (recorded in the
  work dir before that manifest is removed, so a resumed build still knows them), never a file by
  its name alone.
- The previous dataset card (`README.md`) is removed with the manifest when a build starts, and only when
  it is a card thresher wrote (by its opening lines): its `configs` front matter would make the folder of
  an unfinished build load as a complete dataset (`datasets.load_dataset`). The new card is written just
  before the new manifest.
- An output inside an input folder, or an input inside the output, is refused: a rerun would read its
  own shards, stats and card as input.
- A build never writes or deletes through a symbolic link: an output folder whose `.work` is a link,
  whose work dir holds a link at its top, or with a link to a folder among its entries (`index/`
  would be written into the link's target) is refused. A link to a file is harmless (files are
  replaced by renaming over the link, never written through it) and is left alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from thresher.core.errors import WorkDirError
from thresher.paths import is_url, local_path
from thresher.run.workdir import WorkDir
from thresher.write.atomic import write_json_atomic
from thresher.write.manifest import MANIFEST
from thresher.write.storage import LocalStore, Store

PREVIOUS_SHARDS = "previous-shards.json"


def own_manifest(store: Store) -> dict[str, Any] | None:
    """The manifest in `store` if it is one thresher wrote (schema check), else None."""
    try:
        with store.open(MANIFEST) as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):  # missing, unreadable, not UTF-8 JSON
        return None
    if not isinstance(manifest, dict):
        return None
    shards = manifest.get("shards")
    if not (
        isinstance(manifest.get("format_version"), int)
        and isinstance(manifest.get("thresher_version"), str)
        and isinstance(manifest.get("config_hash"), str)
        and isinstance(shards, list)
        and all(
            isinstance(s, dict) and isinstance(s.get("path"), str) and isinstance(s.get("sha256"), str) for s in shards
        )
    ):
        return None
    return manifest


CARD_FILE = "README.md"
_CARD_TITLE = "# Dataset card\n\nBuilt by thresher "


def own_card(store: Store) -> bool:
    """Whether `store` holds a dataset card thresher wrote: its title and first line, after the front
    matter if it has one (`thresher.write.card`)."""
    try:
        with store.open(CARD_FILE) as f:
            head = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return False
    if head.startswith("---\n"):
        end = head.find("\n---\n", 3)
        head = head[end + 5:].lstrip("\n") if end >= 0 else ""
    return head.startswith(_CARD_TITLE)


def remove_own_card(store: Store) -> None:
    """Remove the dataset card if thresher wrote it (see the module docstring)."""
    if own_card(store):
        store.remove(CARD_FILE)


# What a work dir holds before its plan is written: the lock, the output a `--work-dir` was claimed
# for, standard input being spooled
BEFORE_PLAN = frozenset({"lock", "output.json", "stdin.bin", "stdin.bin.tmp"})


def own_work_dir(work: WorkDir) -> bool:
    """Whether `work` is a work dir thresher made (see the module docstring)."""
    try:
        entries = {e.name for e in work.root.iterdir()}
    except OSError:
        return False
    if entries <= BEFORE_PLAN:
        return True
    try:
        plan = json.loads(work.path("plan.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(plan, dict) and {"config_hash", "partitions", "key_layout"} <= set(plan)


def listed_shards(manifest: dict[str, Any]) -> list[str]:
    """The shards a manifest lists, its signals files (a build without --signals removes them) and
    the files of its language partitions (`thresher.write.partitions`)."""
    from thresher.write.partitions import partition_files

    signals = (manifest.get("signals") or {}).get("files") or []
    partitions = manifest.get("partitions")
    extra = partition_files(partitions) if isinstance(partitions, dict) else []
    paths = [s["path"] for s in [*manifest["shards"], *signals] if isinstance(s.get("path"), str)]
    return [p for p in [*paths, *extra] if _inside(p)]


def _inside(rel: str) -> bool:
    """A manifest path that stays inside the dataset (never `..`, never absolute)."""
    parts = rel.replace("\\", "/").split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts


def remember_previous_shards(work: WorkDir, shards: Iterable[str]) -> None:
    """Record the previous dataset's shards in the work dir (merged with any recorded before)."""
    path = work.path(PREVIOUS_SHARDS)
    known = set(previous_shards(work)) | set(shards)
    if known:
        write_json_atomic(path, sorted(known))


def previous_shards(work: WorkDir) -> list[str]:
    try:
        value = json.loads(work.path(PREVIOUS_SHARDS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [p for p in value if isinstance(p, str) and _inside(p)] if isinstance(value, list) else []


def _real(path: str) -> str:
    return os.path.realpath(local_path(path))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_not_nested(inputs: Iterable[str], target: Store) -> None:
    """Refuse a local output inside an input folder, and an input inside the output."""
    if not isinstance(target, LocalStore):
        return
    out = os.path.realpath(target.root)
    for item in inputs:
        if item == "-" or is_url(item):
            continue
        path = _real(item)
        if os.path.isdir(path) and _within(out, path):
            raise WorkDirError(
                f"{target.root}: the output is inside the input folder {item}; a rerun would read its own shards "
                "as input: choose an output outside it"
            )
        if _within(path, out):
            raise WorkDirError(f"{item}: the input is inside the output {target.root}; choose an output elsewhere")


def _links(folder: Path, *, to_folders_only: bool) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(
                (e for e in entries if e.is_symlink() and (not to_folders_only or os.path.isdir(e.path))),
                key=lambda e: e.name,
            )
    except (FileNotFoundError, NotADirectoryError):
        return []


def check_no_links(stage: Path) -> None:
    """Refuse a stage (the output folder, or `--work-dir`) that a build would write into or delete in
    through a symbolic link: its `.work` being one, a link at the top of `.work`, or a link to a
    folder among its entries. `--overwrite` does not lift this: what the link points at is not
    thresher's, and neither is the link (the user removes it)."""
    work = stage / ".work"
    hint = (
        "remove the link (thresher writes and deletes only in folders it made; "
        "--work-dir puts the work files elsewhere)"
    )
    if work.is_symlink():
        raise WorkDirError(f"{work}: a symbolic link (to {os.readlink(work)}), not a work dir thresher made; {hint}")
    for entry in _links(work, to_folders_only=False):
        raise WorkDirError(f"{entry.path}: a symbolic link in the work dir (to {os.readlink(entry.path)}); {hint}")
    for entry in _links(stage, to_folders_only=True):
        raise WorkDirError(
            f"{entry.path}: a symbolic link to a folder in the output (to {os.readlink(entry.path)}); {hint}"
        )
