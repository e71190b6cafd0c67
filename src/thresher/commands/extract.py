"""`thresher extract PAGE`: print the main content of one HTML page (a file, `.html.gz`, or `-` for
stdin) as text, or with `--json` as an object with title, text, metadata and tables."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Literal, get_args, get_origin

from thresher.core.config import flat_fields, from_dict
from thresher.core.errors import InputError
from thresher.extract.base import ExtractionTimeout
from thresher.extract.config import ExtractConfig
from thresher.extract.registry import get_extractor


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("extract", help="print the main content of one HTML page", description=__doc__)
    p.add_argument("page", help="HTML file (.html or .html.gz), or - for stdin")
    p.add_argument("--json", action="store_true", help="print title, text, metadata and tables as JSON")
    p.add_argument("--url", default=None, help="the page's URL (helps resolve metadata)")
    for ff in flat_fields(ExtractConfig):
        if ff.flag is None:
            continue
        choices = get_args(ff.type) if get_origin(ff.type) is Literal else None
        p.add_argument(ff.flag, dest=ff.path[-1], default=None, choices=choices,
                       help=f"{ff.help} (default: {ff.default})")
    p.set_defaults(handler=run)


def read_page(path: str) -> str:
    from thresher.commands.inputs import read_bytes

    data = read_bytes(path)
    kind = _binary_kind(data)
    if kind is not None:
        raise InputError(f"{path}: not an HTML page ({kind} content)")
    try:
        from thresher.read.decode import decode_html
    except ImportError:  # the reader package is optional for this verb
        return data.decode("utf-8", "replace")
    return decode_html(data)[0]


def _binary_kind(data: bytes) -> str | None:
    """What a binary file is (image, archive, `binary` for NUL bytes), or None for text: the bytes of
    a PNG printed to a terminal help nobody."""
    try:
        from thresher.read.warc_payload import binary_kind
    except ImportError:  # the reader package is optional for this verb
        return "binary" if b"\x00" in data[:1024] else None
    return binary_kind(data)


def run(args: argparse.Namespace) -> int:
    overrides = {ff.path[-1]: getattr(args, ff.path[-1]) for ff in flat_fields(ExtractConfig)
                 if ff.flag is not None and getattr(args, ff.path[-1], None) is not None}
    config: ExtractConfig = from_dict(ExtractConfig, overrides, "extract")
    from thresher.config import RunConfig
    from thresher.run.preflight import check_extra, needed_extras

    for need in needed_extras([], None, RunConfig(extract=config)):
        check_extra(need)  # a broken install names its real import error, not only the extra
    extractor = get_extractor(config)
    html = read_page(args.page)
    deadline = time.monotonic() + config.timeout_s if config.timeout_s is not None else None
    try:
        result = extractor.extract(html, url=args.url, deadline=deadline)
    except ExtractionTimeout as exc:
        raise InputError(f"{args.page}: extraction passed the {config.timeout_s} s time limit") from exc
    if args.json:
        out: dict[str, Any] = {"title": result.title, "text": result.text, "metadata": result.metadata,
               "extractor": extractor.name, "extractor_version": extractor.version()}
        if config.tables == "split":
            out["tables"] = result.tables
        sys.stdout.write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(result.text + ("\n" if result.text else ""))
        if config.tables == "split":
            for table in result.tables:
                sys.stdout.write("\n" + table + "\n")
    return 0
