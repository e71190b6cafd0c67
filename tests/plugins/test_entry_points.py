"""Third-party readers, output formats and stages load through Python entry points: a tiny plugin
package is installed into a temporary venv (pip, no index, no build isolation, no thresher edit) and
a build selects its reader, its format and its stage by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from thresher.config import RunConfig
from thresher.core.errors import ConfigError
from thresher.read.readers import READERS
from thresher.registry import Registry
from thresher.write.formats import FORMATS

SRC = Path(__file__).resolve().parents[2] / "src"

PLUGIN = {
    "pyproject.toml": """
        [build-system]
        requires = []
        build-backend = "tiny_backend"
        backend-path = ["."]
    """,
    # A PEP 517 backend of a few lines: the test needs no setuptools in the temporary venv.
    "tiny_backend.py": '''
        import base64, hashlib, os, zipfile

        NAME, VERSION = "thresher_lines", "0.1"
        DIST = f"{NAME}-{VERSION}.dist-info"
        ENTRY_POINTS = """[thresher.readers]
        lines = thresher_lines:READER

        [thresher.formats]
        jsonl.plain = thresher_lines:PlainJsonl

        [thresher.stages]
        no_forbidden = thresher_lines:no_forbidden
        """

        def _record(name, data):
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            return f"{name},sha256={digest},{len(data)}"

        def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
            wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
            files = {
                f"{NAME}/__init__.py": open(os.path.join(NAME, "__init__.py"), "rb").read(),
                f"{DIST}/METADATA": f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode(),
                f"{DIST}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
                f"{DIST}/entry_points.txt": "\\n".join(l.strip() for l in ENTRY_POINTS.splitlines()).encode(),
            }
            records = [_record(n, d) for n, d in files.items()] + [f"{DIST}/RECORD,,"]
            files[f"{DIST}/RECORD"] = ("\\n".join(records) + "\\n").encode()
            with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
                for name, data in files.items():
                    z.writestr(name, data)
            return wheel
    ''',
    "thresher_lines/__init__.py": '''
        """A plugin for thresher: `.lines` files (one document per line), plain JSONL shards, and a
        rule set that drops documents mentioning a forbidden word."""

        import json

        from thresher.core.document import Document, Drop, make_doc_id
        from thresher.read.base import make_ordinal
        from thresher.read.readers import ReaderSpec
        from thresher.write.pieces import iter_piece_lines

        READER = ReaderSpec(kind="lines", read="thresher_lines:read_lines", suffixes=(".lines",))


        def read_lines(partition, config):
            with open(partition.path, encoding="utf-8") as f:
                for i, line in enumerate(f):
                    text = line.strip()
                    yield Document(id=make_doc_id(f"line:{i}", text), url=f"https://lines.example/{i}", text=text,
                                   source={"file": partition.path, "line": i}, ordinal=make_ordinal(partition.index, i))


        class PlainJsonl:
            name = "jsonl.plain"
            suffix = ".jsonl"

            def __init__(self, compression_level=6):
                pass

            def shard_name(self, index, total):
                return f"shard-{index:05d}.jsonl"

            def assemble(self, pieces, dest):
                n = 0
                with open(dest, "wb") as out:
                    for line in iter_piece_lines(pieces):
                        out.write(line)
                        n += 1
                return n

            def read(self, raw):
                for line in raw:
                    yield json.loads(line)

            def card(self, text):
                return text + "\\nPlain JSONL shards (thresher_lines plugin).\\n"


        class NoForbidden:
            name = "plugin.no_forbidden"

            def check(self, doc):
                if "forbidden" in doc.text:
                    return Drop(self.name, "forbidden_word")
                return None


        def no_forbidden(config, cache, active):
            return NoForbidden()
    ''',
}

BUILD_SCRIPT = """
import json, sys
from thresher.config import RunConfig
from thresher.run.build import build
from thresher.write.manifest import read_shards, verify_dataset

config = RunConfig.from_dict({
    "exec": {"engine": "local"},
    "quality": {"preset": None, "rule_sets": ["no_forbidden"]},
    "dedup": {"near": {"method": None}},
    "output": {"format": "jsonl.plain"},
})
result = build([sys.argv[1]], sys.argv[2], config)
print(json.dumps({
    "kept": result.stats.kept,
    "drops": result.stats.to_dict()["drops"],
    "shards": [s["path"] for s in result.manifest["shards"]],
    "problems": [p.describe() for p in verify_dataset(sys.argv[2], count_records=True)],
    "texts": [r["text"] for r in read_shards(sys.argv[2])],
}))
"""


def _write_plugin(root: Path) -> Path:
    for rel, text in PLUGIN.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_a_plugin_installed_with_pip_adds_a_reader_a_format_and_a_stage(tmp_path):
    plugin = _write_plugin(tmp_path / "plugin")
    env_dir = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True, capture_output=True
    )
    py = env_dir / "bin" / "python"
    install = subprocess.run(
        [py, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index", str(plugin)],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr
    crawl = tmp_path / "pages.lines"
    crawl.write_text(
        "a first page of text\na page with a forbidden word\nthe last page\na first page of text\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}  # thresher from this checkout, the plugin from the venv
    run = subprocess.run(
        [py, "-c", BUILD_SCRIPT, str(crawl), str(tmp_path / "out")], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["texts"] == ["a first page of text", "the last page"]  # read by the plugin's reader
    assert got["drops"] == {"dedup.exact": {"exact_duplicate": 1}, "plugin.no_forbidden": {"forbidden_word": 1}}
    assert got["shards"] == ["shard-00000.jsonl"] and got["problems"] == []  # written and read back by its format
    assert "thresher_lines plugin" in (tmp_path / "out" / "README.md").read_text(encoding="utf-8")


def test_without_the_plugin_its_names_are_refused_with_the_known_ones():
    assert "lines" not in READERS and "jsonl.plain" not in FORMATS
    with pytest.raises(ConfigError, match=r"unknown output format 'jsonl.plain' \(known: jsonl.gz, jsonl.zst, parquet"):
        RunConfig.from_dict({"output": {"format": "jsonl.plain"}})
    with pytest.raises(ConfigError, match="unknown quality rule set 'no_forbidden'"):
        RunConfig.from_dict({"quality": {"rule_sets": ["no_forbidden"]}})
    with pytest.raises(ConfigError, match=r"unknown extractor 'alltext' \(known: builtin, trafilatura, resiliparse"):
        RunConfig.from_dict({"extract": {"extractor": "alltext"}})
    with pytest.raises(ConfigError, match=r"unknown engine 'shuffle' \(known: local, pool, ray"):
        RunConfig.from_dict({"exec": {"engine": "shuffle"}})


def test_every_extension_kind_is_a_registry_with_its_own_entry_point_group():
    from thresher.classify.kinds import CLASSIFIERS, kind_of
    from thresher.dedup.methods import NEAR_METHODS
    from thresher.embed.encoder import ENCODERS, check_encoder
    from thresher.extract.registry import EXTRACTORS
    from thresher.quality.rule_sets import RULE_SETS
    from thresher.run.engine_registry import ENGINES

    groups = {r.group: r for r in (READERS, FORMATS, RULE_SETS, NEAR_METHODS, EXTRACTORS, ENCODERS, CLASSIFIERS,
                                   ENGINES)}
    assert all(isinstance(r, Registry) for r in groups.values()) and len(groups) == 8
    assert sorted(groups) == sorted(f"thresher.{g}" for g in ("readers", "formats", "stages", "dedup_methods",
                                                               "extractors", "encoders", "classifiers", "engines"))
    assert EXTRACTORS.names_so_far() == ["builtin", "trafilatura", "resiliparse"]
    assert ENGINES.names_so_far() == ["local", "pool", "ray"]
    assert ENCODERS.names_so_far() == ["wordllama", "minilm", "minilm-onnx", "stub"]
    assert [kind_of(p).name for p in ("m.thc", "M.ONNX", "model.bin", "lid.176.ftz", "model.dat")] == [
        "thc", "onnx", "fasttext", "fasttext", "thc"]
    with pytest.raises(ConfigError, match="unknown encoder 'chargram'; known: minilm, minilm-onnx, stub, wordllama"):
        check_encoder("chargram", "cpu")


def test_registry_keeps_the_first_registration_and_loads_lazily():
    registry: Registry[object] = Registry("thing", "thresher.tests-no-such-group", {"json": "json:dumps"})
    registry.register("json", "os:getcwd")  # a later registration cannot replace a name
    assert registry.get("json") is json.dumps
    with pytest.raises(ConfigError, match=r"unknown thing 'nope' \(known: json\)"):
        registry.get("nope")
