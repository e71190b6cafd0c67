"""`thresher extract PAGE`, called through its `run` handler."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys

import pytest

from thresher.commands import extract as command
from thresher.core.errors import ConfigError, InputError

PARA = "A sentence long enough to count as the main content of this small test page, with a comma."
PAGE = (f'<html lang="en"><title>T</title><body><nav><a href="/">Home</a></nav><h2>Part</h2><p>{PARA}</p>'
        "<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table></body></html>")


def call(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    args = parser.parse_args(["extract", *argv])
    return args.handler(args)


def test_text_of_a_file(tmp_path, capsys):
    page = tmp_path / "p.html"
    page.write_text(PAGE)
    assert call([str(page)]) == 0
    assert capsys.readouterr().out == f"Part\n{PARA}\n| k | v |\n|---|---|\n| a | 1 |\n"


def test_json_of_a_gzipped_file_in_markdown(tmp_path, capsys):
    page = tmp_path / "p.html.gz"
    page.write_bytes(gzip.compress(PAGE.encode()))
    assert call([str(page), "--json", "--text-format", "markdown", "--tables", "split"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["title"] == "T"
    assert out["text"] == f"## Part\n\n{PARA}"
    assert out["metadata"] == {"lang": "en"}
    assert out["tables"] == ["| k | v |\n|---|---|\n| a | 1 |"]
    assert out["extractor"] == "builtin"


def test_stdin(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PAGE.encode())))
    assert call(["-", "--tables", "drop"]) == 0
    assert capsys.readouterr().out == f"Part\n{PARA}\n"


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        call([str(tmp_path / "nope.html")])


def test_unknown_choice_is_a_usage_error():
    with pytest.raises(SystemExit) as exc:
        call(["x.html", "--tables", "sideways"])
    assert exc.value.code == 2


def test_missing_extra_is_a_config_error(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def fake_import(mod, *args, **kwargs):
        if mod.split(".")[0] == "trafilatura":
            raise ImportError(mod)
        return real_import(mod, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    page = tmp_path / "p.html"
    page.write_text(PAGE)
    with pytest.raises(ConfigError):
        call([str(page), "--extractor", "trafilatura"])
