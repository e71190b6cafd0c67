"""`thresher lang FILE`."""

import json

from thresher.cli import main


def test_lang_prints_one_json_object_per_jsonl_record(tmp_path, capsys):
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "Καλημέρα σας, τι κάνετε;"}) + "\n"
                    + json.dumps({"id": "b", "text": "สวัสดีครับ"}) + "\n", encoding="utf-8")
    assert main(["lang", str(path), "--json", "--detector", "script"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["document"], r["code"], r["script"]) for r in rows] == [("a", "el", "Grek"), ("b", "th", "Thai")]


def test_lang_of_a_text_file_names_the_reason_for_und(tmp_path, capsys):
    path = tmp_path / "page.txt"
    path.write_text("1234 5678\n", encoding="utf-8")
    assert main(["lang", str(path), "--detector", "script"]) == 0
    assert capsys.readouterr().out.strip().split("\t")[1:] == ["und", "0.00", "Zyyy", "(no_letters)"]


def test_lang_of_a_missing_file_is_a_one_line_error(tmp_path, capsys):
    assert main(["lang", str(tmp_path / "missing.txt")]) == 1
    assert "cannot read" in capsys.readouterr().err
