from thresher.core.document import Document, Drop, Malformed, make_doc_id


def test_doc_id_is_stable_and_depends_on_url_and_content():
    a = make_doc_id("https://a.example/", "<p>x</p>")
    assert a == make_doc_id("https://a.example/", b"<p>x</p>")
    assert len(a) == 16 and int(a, 16) >= 0
    assert a != make_doc_id("https://b.example/", "<p>x</p>")
    assert a != make_doc_id("https://a.example/", "<p>y</p>")
    # pinned: a silent change would change every id ever written
    assert a == "24cb770ec7a86bf0"


def test_doc_id_pinned_value():
    assert make_doc_id(None, "") == make_doc_id("", b"")
    assert make_doc_id("u", "t") == "3dc7fcde3d19a212"


def test_document_record_round_trip_drops_transient_html():
    doc = Document(
        id="0011223344556677", text="t", url="u", title="T", html="<p>t</p>", metadata={"k": 1}, annotations={"a": 2}
    )
    record = doc.to_record()
    assert "html" not in record
    back = Document.from_record(record, ordinal=5)
    assert (back.id, back.text, back.url, back.title, back.metadata, back.annotations, back.ordinal) == (
        "0011223344556677", "t", "u", "T", {"k": 1}, {"a": 2}, 5)


def test_drop_round_trip_and_description():
    drop = Drop("quality.gopher", "too_few_words", value=12, limit=50, detail={"x": 1})
    assert Drop.from_record(drop.to_record()) == drop
    assert drop.describe() == "quality.gopher: too_few_words (value 12, limit 50)"


def test_malformed_description_names_location_and_reason():
    m = Malformed("invalid_json", "crawl.jsonl:3", "Expecting value at column 1")
    assert m.describe() == "crawl.jsonl:3: invalid_json: Expecting value at column 1"


def test_record_id_names_a_place_and_is_pinned():
    from thresher.core.document import record_id

    a = record_id({"file": "crawl.jsonl", "offset": 0})
    assert a != record_id({"file": "crawl.jsonl", "offset": 1}) != record_id({"file": "other.jsonl", "offset": 0})
    assert a != record_id({"file": "crawl.jsonl", "row": 0})  # a row is not a byte offset
    # what describes the record, not its place, is not part of its name
    assert a == record_id({"file": "crawl.jsonl", "offset": 0, "charset": "utf-8", "record_id": "<urn:x>"})
    # pinned: a silent change would change every id ever written
    assert a == record_id({"offset": 0, "file": "crawl.jsonl"}) == "8d8901d2432b8c61"
