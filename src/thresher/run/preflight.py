"""Checks a build can make before its first task: every input is there and readable, every extra the
config needs imports, every output location is writable.

What fails here fails in a second, with one line, and is never retried: without these checks a
missing file became an empty "complete" dataset, and a missing extra failed at the last phase, after
the whole scan and dedup, three times over.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from thresher.config import RunConfig
from thresher.core.errors import ConfigError, InputError
from thresher.read.paths import glob_files, is_dir, is_file, is_url, list_files, local_path
from thresher.stage_hooks import check_stages

_GLOB_CHARS = set("*?[")


@dataclass(frozen=True, slots=True)
class ExtraNeed:
    """An extra a build needs: the module that must import, the extra that installs it, and why."""

    module: str
    extra: str
    reason: str


def needed_extras(
    inputs: Sequence[str], output: str | Path | None, config: RunConfig, rejects: str | Path | None = None
) -> list[ExtraNeed]:
    """The extras this config and these inputs and outputs need, in a stable order, each once."""
    needs: list[ExtraNeed] = []
    fmt = config.output.format
    if fmt == "parquet":
        needs.append(ExtraNeed("pyarrow", "parquet", "--format parquet"))
    elif fmt == "jsonl.zst":
        needs.append(ExtraNeed("zstandard", "zstd", "--format jsonl.zst"))
    if config.output.signals:
        needs.append(ExtraNeed("pyarrow", "parquet", "--signals"))
    extractor = config.extract.extractor
    if extractor == "trafilatura":
        needs.append(ExtraNeed("trafilatura", "trafilatura", "--extractor trafilatura"))
    elif extractor == "resiliparse":
        needs.append(ExtraNeed("resiliparse.extract.html2text", "resiliparse", "--extractor resiliparse"))
    if config.exec.engine == "ray":
        needs.append(ExtraNeed("ray", "ray", "--engine ray"))
    names = [str(i) for i in inputs if i != "-"]
    if config.input.format == "parquet" or any(_stem(n).endswith(".parquet") for n in names):
        needs.append(ExtraNeed("pyarrow", "parquet", "Parquet input"))
    if any(n.lower().endswith((".zst", ".zstd")) for n in names):
        needs.append(ExtraNeed("zstandard", "zstd", "zstd-compressed input"))
    work_dir = config.exec.work_dir or ""
    urls = [n for n in [*names, str(output or ""), str(rejects or ""), work_dir] if n and is_url(n)]
    if urls:
        needs.append(ExtraNeed("fsspec", "remote", f"the URL {urls[0]}"))
    unique: dict[str, ExtraNeed] = {}
    for need in needs:
        unique.setdefault(need.module, need)
    return list(unique.values())


def _stem(name: str) -> str:
    low = name.lower()
    for suffix in (".gz", ".zst", ".zstd"):
        low = low.removesuffix(suffix)
    return low


def check_extra(need: ExtraNeed) -> None:
    """Import the extra's module; a missing one names the extra to install, a broken one (installed
    but failing to import, e.g. a dependency the resolver skipped) names the real import error."""
    try:
        importlib.import_module(need.module)
    except ModuleNotFoundError as exc:
        top = need.module.split(".")[0]
        if exc.name is not None and (
            exc.name == top or need.module.startswith(exc.name + ".") or exc.name == need.module
        ):
            raise ConfigError(
                f'{need.reason} needs the {need.extra} extra: pip install "thresher[{need.extra}]"'
            ) from exc
        raise ConfigError(f"{need.reason}: {top} is installed but cannot be imported: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any import-time failure of a third-party package
        top = need.module.split(".")[0]
        raise ConfigError(
            f"{need.reason}: {top} is installed but cannot be imported: {type(exc).__name__}: {exc}"
        ) from exc


def _readable(path: str) -> bool:
    return os.access(path, os.R_OK)


def check_inputs(inputs: Iterable[str]) -> None:
    """Every input names something readable: a file, a directory holding at least one readable file,
    a glob matching at least one file, or `-` (stdin). Raises `InputError` naming the first that does not."""
    items = list(inputs)
    if not items:
        raise InputError("no input given")
    for item in items:
        if item == "-":
            continue
        if is_url(item):
            _check_url_input(item)
            continue
        path = local_path(item)
        if os.path.isdir(path):
            files = list_files(path)
            if not files:
                raise InputError(f"{item}: the directory holds no input file")
            if not any(_readable(f) for f in files):
                raise InputError(f"{item}: none of the {len(files)} file(s) in the directory is readable")
        elif os.path.isfile(path):
            if not _readable(path):
                raise InputError(f"{item}: cannot read (permission denied)")
        elif _GLOB_CHARS & set(item):
            matches = glob_files(item)
            if not matches:
                raise InputError(f"{item}: the pattern matches no file")
            if not any(_readable(f) for f in matches):
                raise InputError(f"{item}: none of the {len(matches)} file(s) the pattern matches is readable")
        elif os.path.exists(path):
            raise InputError(f"{item}: not a file or directory")
        else:
            raise InputError(f"{item}: no such file or directory")


def _check_url_input(url: str) -> None:
    if is_dir(url):
        if not list_files(url):
            raise InputError(f"{url}: holds no input object")
    elif is_file(url):
        return
    elif _GLOB_CHARS & set(url):
        if not glob_files(url):
            raise InputError(f"{url}: the pattern matches no object")
    else:
        raise InputError(f"{url}: no such object")


def _ancestors(path: Path) -> Iterator[Path]:
    yield path
    yield from path.parents


def check_writable(location: str | Path, what: str) -> None:
    """A local output location is a writable directory, or can be created as one (its nearest
    existing ancestor is a writable directory). URL locations are checked when written."""
    text = str(location)
    if is_url(text):
        return
    path = Path(local_path(text)).absolute()
    for candidate in _ancestors(path):
        if not candidate.exists():
            continue
        if not candidate.is_dir():
            where = "" if candidate == path else f" ({candidate} is a file)"
            raise ConfigError(f"{what} {text}: not a directory{where}")
        if not os.access(candidate, os.W_OK | os.X_OK):
            raise ConfigError(f"{what} {text}: cannot write to {candidate} (permission denied)")
        return


def check_work_dir(work_dir: str) -> None:
    """A local work dir is writable; one at a URL is reached once (endpoint, bucket, credentials,
    the thresher that made it: `thresher.run.store_object.probe_work_store`). Until the build's
    phases run on an object store, `ExecConfig` refuses a URL work dir before this (docs/scaling.md,
    "Work store")."""
    if not is_url(work_dir):
        check_writable(work_dir, "work dir")
        return
    from thresher.run.store_object import probe_work_store

    probe_work_store(work_dir)


def preflight(
    inputs: Sequence[str], output: str | Path | None, config: RunConfig, *, rejects: str | Path | None = None
) -> None:
    """Everything a build can check before its first task; raises `ConfigError` or `InputError`."""
    check_inputs(inputs)
    for need in needed_extras(inputs, output, config, rejects):
        check_extra(need)
    if output is not None:
        check_writable(output, "output")
    if rejects is not None:
        check_writable(rejects, "rejects folder")
        if not is_url(str(rejects)):
            try:  # made now: a folder that cannot be made would otherwise fail after the whole build
                Path(local_path(str(rejects))).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"rejects folder {rejects}: cannot create it: {exc.strerror or exc}") from exc
    if config.exec.work_dir is not None:
        check_work_dir(config.exec.work_dir)
    if config.output.card_tokenizer is not None:  # the tokenizer file is installed and loads
        from thresher.write.tokens import token_counter

        token_counter(config.output.card_tokenizer)
    check_stages(config)  # each classifier model exists, is intact and has the keep labels
