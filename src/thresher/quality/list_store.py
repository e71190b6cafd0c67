"""Large URL lists compiled once into a file that every process reads, none holds.

A list whose files total at least COMPILE_MIN_BYTES (the FineWeb block list: 18 MB compressed,
4.56 M domains) is compiled on first use into `<folder>/<key>.urllist` and read by every process
that needs it a block per lookup (`thresher.mapped_file.PagedDigests`): the digests stay in the
page cache, shared by every worker and mapped by none, so a second worker costs only a 71 KB fence
of its own, and loading costs one checksum pass instead of a parse (~0.05 CPU s against ~8). `key`
is a digest of the lists' content (and of this format and the digest threshold), not of their paths
or dates: a changed list gives a new file, the same list anywhere finds the old one.

The file: a header (magic, format version, flags, counts and section lengths, a 16-byte BLAKE2b
checksum of the key, the header's fields and the body), then the domains as sorted distinct 64-bit
digests (little-endian; `DomainDigests`), then the URL prefixes as digests too (format 2: as a set
of strings, format 1's lines cost each worker ~3 MiB of its own for the FineWeb list's 19,587), then,
for a domain list small enough to stay a set of strings, the domains as sorted lines. A file whose size, header or
checksum does not match is never used: it is compiled again and replaced.

It is written to a temporary file and renamed into place, under an exclusive lock on
`<key>.lock`, so two processes compiling at once do not clash (the second waits and reads the
first's file) and a reader never sees a partial file. A folder that cannot be written falls back to
the in-memory list (logged), with identical results.

The build compiles its lists before the scan starts (`precompile`), into `<work dir>/lists/` unless
`quality.urls.compiled_dir` names another folder; the library (no work dir) uses
`$XDG_CACHE_HOME/thresher/lists` (`~/.cache` without it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thresher.core.errors import ConfigError
from thresher.mapped_file import (
    PagedDigests,
    exclusive_lock,
    little_endian,
    read_chunks,
    write_atomically,
)
from thresher.quality import url_lists as urls
from thresher.quality.url_lists import DomainDigests, UrlLists

if TYPE_CHECKING:
    from thresher.quality.urls import UrlFilterConfig

log = logging.getLogger(__name__)

FORMAT_VERSION = 2  # 2: URL prefixes as digests, before the domain lines
MAGIC = b"THRLIST\x00"
SUFFIX = ".urllist"
# magic, version, flags, digests, domain lines, domain bytes, url prefixes, url bytes, checksum
_HEADER = struct.Struct("<8sIIQQQQQ16s")
HEADER_BYTES = 96  # _HEADER padded with zeros: the digests start 8-byte aligned
FLAG_DIGESTS = 1  # the domains are digests (else sorted lines)
# Lists smaller than this are read into memory by each process, as before: compiling them would save
# less than the file costs.
COMPILE_MIN_BYTES = 1 << 20
_READ_CHUNK = 1 << 20


def default_folder() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "thresher" / "lists"


def worth_compiling(paths: tuple[str, ...]) -> bool:
    signature = urls.list_files_signature(paths)
    return signature is not None and sum(size for _path, size, _mtime in signature) >= COMPILE_MIN_BYTES


def _source_files(paths: tuple[str, ...]) -> Iterator[tuple[bytes, str]]:
    """(what the file is to the loader, its path) for every file the lists are read from, in order."""
    for path in paths:
        if os.path.isdir(path):
            for _name, full in urls.ut1_files(path):
                yield b"dir:" + os.path.relpath(full, path).encode("utf-8", "surrogateescape"), full
        elif path.endswith((".tar.gz", ".tgz", ".tar")):
            yield b"archive", path
        else:
            yield b"file", path


def content_key(paths: tuple[str, ...]) -> str:
    """A digest of every list file's role and bytes, this format and the digest threshold."""
    h = hashlib.blake2b(digest_size=16)
    h.update(b"thresher url lists %d %d\n" % (FORMAT_VERSION, urls.DIGEST_FILE_BYTES))
    try:
        for role, path in _source_files(paths):
            h.update(b"%d:%s\n" % (len(role), role))
            with open(path, "rb") as f:
                h.update(b"%d\n" % os.fstat(f.fileno()).st_size)
                while chunk := f.read(_READ_CHUNK):
                    h.update(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read URL list {exc.filename}: {exc.strerror}") from exc
    return h.hexdigest()


def _lines_blob(entries: set[str]) -> bytes:
    return "\n".join(sorted(entries)).encode("utf-8", "surrogatepass")


def _checksum(key: str, fields: tuple[Any, ...], body: Iterator[Any]) -> bytes:
    h = hashlib.blake2b(key.encode(), digest_size=16)
    h.update(struct.pack("<IIQQQQQ", *fields))
    for part in body:
        h.update(part)
    return h.digest()


def write_compiled(path: Path, key: str, lists: UrlLists) -> None:
    """Write `lists` to `path` atomically (a temporary file renamed into place)."""
    if isinstance(lists.domains, DomainDigests):
        digest_bytes, domain_blob, n_domains = little_endian(lists.domains.digests), b"", 0
        flags, n_digests = FLAG_DIGESTS, len(lists.domains)
    else:
        digest_bytes, domain_blob, n_domains = memoryview(b""), _lines_blob(lists.domains), len(lists.domains)
        flags, n_digests = 0, 0
    # URL prefixes as digests too: as a set of strings they cost every worker ~3 MiB of its own
    # memory for the FineWeb list's 19,587 prefixes; digests read from the file cost it nothing
    prefixes = lists.urls if isinstance(lists.urls, DomainDigests) else DomainDigests(
        DomainDigests.digest(u) for u in lists.urls)
    url_bytes = little_endian(prefixes.digests)
    fields = (FORMAT_VERSION, flags, n_digests, n_domains, len(domain_blob), len(prefixes), len(url_bytes))
    checksum = _checksum(key, fields, iter((digest_bytes, url_bytes, domain_blob)))
    header = _HEADER.pack(MAGIC, *fields, checksum).ljust(HEADER_BYTES, b"\0")
    write_atomically(path, (header, digest_bytes, url_bytes, domain_blob))


def _split_lines(blob: bytes | memoryview, count: int) -> set[str]:
    return set(bytes(blob).decode("utf-8", "surrogatepass").split("\n")) if count else set()


def open_compiled(path: Path, key: str, *, verify: bool = True) -> UrlLists | None:
    """The lists in `path`, read a block per lookup (`PagedDigests`); None when the file is missing,
    truncated or fails its checksum."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(HEADER_BYTES)
            if len(head) < HEADER_BYTES or head[:8] != MAGIC:
                return None
            magic, *fields, checksum = _HEADER.unpack_from(head)
            version, flags, n_digests, n_domains, domain_bytes, n_urls, url_bytes = fields
            body_bytes = 8 * n_digests + url_bytes + domain_bytes
            if version != FORMAT_VERSION or size != HEADER_BYTES + body_bytes or url_bytes != 8 * n_urls:
                return None
            if verify and _checksum(key, tuple(fields), read_chunks(f, body_bytes)) != checksum:
                return None
            urls_start = HEADER_BYTES + 8 * n_digests
            lines_start = urls_start + url_bytes
            # the descriptor the checksum was read through: a file replaced since is not the one read
            domains: set[str] | DomainDigests
            if flags & FLAG_DIGESTS:
                domains = DomainDigests.from_sorted(PagedDigests(f.fileno(), HEADER_BYTES, n_digests))
            else:
                domains = _split_lines(os.pread(f.fileno(), domain_bytes, lines_start), n_domains)
            prefixes = DomainDigests.from_sorted(PagedDigests(f.fileno(), urls_start, n_urls))
    except (OSError, struct.error, ValueError):
        return None
    return UrlLists(domains, prefixes)


def open_or_compile(paths: tuple[str, ...], folder: Path) -> UrlLists:
    """The compiled `paths` from `folder`, compiled there first when missing or damaged. Raises
    OSError when the folder cannot be written."""
    key = content_key(paths)
    path = folder / f"{key}{SUFFIX}"
    found = open_compiled(path, key)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(folder / f"{key}.lock"):
        found = open_compiled(path, key)  # another process may have compiled it while this one waited
        if found is not None:
            return found
        lists = urls.load_url_lists(paths)
        write_compiled(path, key, lists)
        log.info("compiled URL lists %s into %s", ", ".join(paths), path)
    compiled = open_compiled(path, key, verify=False)  # just written and checked by this process
    return compiled if compiled is not None else lists


def shared_url_lists(paths: tuple[str, ...], folder: str | Path | None) -> UrlLists:
    """`paths` as lists read from their compiled file (compiled first when needed); read into
    memory where the folder cannot be written."""
    target = Path(folder) if folder else default_folder()
    try:
        return open_or_compile(paths, target)
    except OSError as exc:
        log.warning("cannot compile URL lists into %s (%s): each process reads them itself", target, exc)
        return urls.load_url_lists(paths)


def precompile(config: UrlFilterConfig, folder: str | Path | None) -> None:
    """Compile the config's large lists before the workers need them (the build's driver)."""
    for paths in (config.blocklists, config.allowlists):
        if paths and worth_compiling(tuple(paths)):
            shared_url_lists(tuple(paths), folder)
