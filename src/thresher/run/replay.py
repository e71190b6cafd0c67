"""`thresher replay DATASET -o NEW`: a build whose input is DATASET's signals table (`build
--signals`), with DATASET's settings changed by the caller's (docs/signals.md, "Replay").

The input is the table's part files, one partition each, in the first build's partition order, so
every row keeps its ordinal and the output order and dedup's "first" are the first build's. The
chain is `thresher.replay_chain.ReplayChain` (chosen by the input kind `signals`); everything after
it is a build's own code. What the table does not hold, the replay carries from DATASET's
`stats.json`: the malformed records and the reader's own drops (which never became documents), the
counts the stages before quality made (languages seen), and the reader's events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from thresher.config import RunConfig
from thresher.core.config import merge
from thresher.core.errors import ConfigError, DatasetError
from thresher.core.stats import Stats
from thresher.paths import is_url
from thresher.replay_chain import check_replayable
from thresher.run.build import BuildResult, build
from thresher.run.phases import ProgressSink
from thresher.write.manifest import MANIFEST
from thresher.write.signals import SCHEMA_VERSION

REPLAY_INPUT = "signals"
# counters of DATASET's stats.json that no replayed row makes again (see the module doc); the
# corpus stages' events are counted again by the replay's own dedup phases
CARRIED_PREFIXES = ("malformed", "drop/read/", "lang/", "lang.und/", "event/")
RECOUNTED_EVENTS = ("event/dedup.", "event/semantic")


def replay_inputs(dataset: str | Path) -> tuple[list[str], dict[str, Any], Stats]:
    """DATASET's signals part files (in partition order), its manifest and its stats."""
    if is_url(str(dataset)):
        raise ConfigError(f"{dataset}: thresher replay reads a local dataset folder")
    root = Path(dataset)
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        stats = Stats.from_dict(json.loads((root / "stats.json").read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{root}: not a finished dataset ({exc})") from exc
    section = manifest.get("signals")
    if not section:
        raise DatasetError(f"{root}: the dataset has no signals table (build it with --signals)")
    if section.get("schema_version") != SCHEMA_VERSION:
        raise DatasetError(f"{root}: signals table version {section.get('schema_version')}, replay reads version "
                           f"{SCHEMA_VERSION}: build it again with --signals")
    files = section.get("files") or []
    if [f.get("partition") for f in files] != list(range(len(files))):
        raise DatasetError(f"{root}: the signals table does not list one file per partition, in order")
    return [str(root / f["path"]) for f in files], manifest, stats


def replay_config(manifest: Mapping[str, Any], overrides: Mapping[str, Any]) -> tuple[RunConfig, RunConfig]:
    """(the first build's config, the config of the fresh build the replay stands for): the
    manifest's settings, then `overrides` (nested, as a TOML file and flags give them); refused
    when a setting cannot be replayed. The replay runs the latter reading the table (`as_replay`)
    and its manifest names the latter as it is, so its `config_hash` is that fresh build's."""
    if (overrides.get("output") or {}).get("signals"):
        raise ConfigError("thresher replay cannot change output.signals (a replay writes no signals table: "
                          "its rows would hold the first build's measurements, not this one's)")
    recorded = dict(manifest.get("config") or {})
    original = RunConfig.from_dict(recorded)
    published = RunConfig.from_dict(merge(merge(recorded, dict(overrides)), {"output": {"signals": False}}))
    check_replayable(original, as_replay(published))
    return original, published


def as_replay(config: RunConfig) -> RunConfig:
    """`config` reading a signals table (the input kind the replay's scan recognizes)."""
    return replace(config, input=replace(config.input, format=REPLAY_INPUT))


def carried_stats(stats: Stats) -> Stats:
    """The counters of the first build that the replay does not make again (see the module doc)."""
    carried = Stats()
    for key, n in stats.counters.items():
        if key.startswith(CARRIED_PREFIXES) and not key.startswith(RECOUNTED_EVENTS) and n:
            carried.count(key, n)
    skipped = sum(n for key, n in carried.counters.items() if key.startswith("drop/read/"))
    carried.count("seen", carried.counters["malformed"] + skipped)
    carried.count("dropped", skipped)
    return carried


def replay(
    dataset: str | Path,
    output: str | Path,
    overrides: Mapping[str, Any] | None = None,
    *,
    rejects: str | Path | None = None,
    overwrite: bool = False,
    on_progress: ProgressSink | None = None,
) -> BuildResult:
    """Decide DATASET's documents again under its settings changed by `overrides`, into `output`:
    the shards, manifest records and stats a fresh build with those settings writes."""
    inputs, manifest, stats = replay_inputs(dataset)
    _, published = replay_config(manifest, overrides or {})
    return build(inputs, output, as_replay(published), rejects=rejects, overwrite=overwrite,
                 on_progress=on_progress, carried=carried_stats(stats), published=published)
