"""One input record (a JSON object, a Parquet row) to a `Document`, by the configured field names.

Shared by the JSONL and Parquet readers so both apply the same rules: the URL, `html` and `text`
fields are taken out, every other field is kept as metadata, the id comes from the record's place
(`core.document.record_id`; a caller's id field is kept as `metadata.source_id`), and a wrong type or
missing field is a `Malformed` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thresher.core.document import Document, Malformed, record_id
from thresher.read.config import InputConfig
from thresher.read.decode import decode_html


def document_from_fields(
    record: dict[str, Any],
    where: str,
    config: InputConfig,
    *,
    source: dict[str, Any] | None = None,
    metadata_value: Callable[[Any], Any] | None = None,
) -> Document | Malformed:
    """`record` is consumed. `html` may be bytes (a binary column): it is decoded and the charset
    recorded in `source`. `metadata_value` turns other fields into JSON-ready values."""
    url = record.pop(config.url_field, None)
    html = record.pop(config.html_field, None)
    body = record.pop(config.text_field, None)
    if url is not None and not isinstance(url, str):
        return Malformed("wrong_type", where, f"{config.url_field!r} is a {type(url).__name__}, expected a string")
    if url is None and config.require_url:
        return Malformed("missing_url", where, f"no {config.url_field!r} field")
    if html is not None and not isinstance(html, (str, bytes)):
        return Malformed("wrong_type", where, f"{config.html_field!r} is a {type(html).__name__}, expected a string")
    if body is not None and not isinstance(body, str):
        return Malformed("wrong_type", where, f"{config.text_field!r} is a {type(body).__name__}, expected a string")
    if html is None and body is None:
        return Malformed("missing_content", where, f"neither {config.html_field!r} nor {config.text_field!r}")
    source = dict(source or {})
    if isinstance(html, bytes):
        html, charset, _ = decode_html(html, None)
        source["charset"] = charset
    title = record.pop("title", None)
    metadata = record if metadata_value is None else {str(k): metadata_value(v) for k, v in record.items()}
    if config.id_field and config.id_field in metadata:
        metadata["source_id"] = metadata.pop(config.id_field)
    return Document(
        # the JSONL reader places its records (and so names them) after parsing: no source yet
        id=record_id(source) if source else "",
        text=body or "" if html is None else "",
        url=url,
        title=title if isinstance(title, str) else None,
        html=html,
        source=source,
        metadata=metadata,
    )
