"""A build never writes into, or deletes in, what a symbolic link in its output points at —
`--overwrite` included (issue 13: `--overwrite` over a `.work` link wrote into the link's target,
and a link inside `.work` gave a traceback). Each case is refused with one line, exit 1, and the
link's target is left byte for byte as it was."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.cli import main
from thresher.core.errors import WorkDirError
from thresher.run.build import build
from thresher.run.plan import reset_workdir
from thresher.run.workdir import WorkDir


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def crawl(tmp_path):
    records = [
        {"url": f"https://e.example/{i}", "text": f"document {i} " + "word " * 40 + str(i) * 8} for i in range(6)
    ]
    return write_jsonl(tmp_path / "crawl.jsonl", records)


@pytest.fixture()
def finished(tmp_path, crawl):
    """A finished dataset, and another build's kept work dir (a thresher work dir, not this one's)."""
    out, other = tmp_path / "out", tmp_path / "other"
    config = local_config(exec={"keep_work": True})
    build([str(crawl)], out, config)
    build([str(crawl)], other, config, overwrite=True)
    shutil.rmtree(out / ".work")
    return out, other / ".work"


def _refused(crawl, out, capsys, match):
    with pytest.raises(WorkDirError, match=match):
        build([str(crawl)], out, local_config(), overwrite=True)
    code = main(["build", str(crawl), "-o", str(out), "--quality", "none", "--overwrite"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1 and "symbolic link" in err, err


def test_work_link_to_another_builds_work_dir_is_refused_even_with_overwrite(finished, crawl, capsys):
    out, other_work = finished
    before = _snapshot(other_work)
    os.symlink(other_work, out / ".work")
    _refused(crawl, out, capsys, r"\.work: a symbolic link")
    assert _snapshot(other_work) == before and (out / ".work").is_symlink()


def test_work_link_to_a_user_folder_or_nowhere_is_refused(finished, crawl, tmp_path, capsys):
    out, _ = finished
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    os.symlink(mine, out / ".work")
    _refused(crawl, out, capsys, r"\.work: a symbolic link")
    assert _snapshot(mine) == {"notes.txt": b"keep me"}
    (out / ".work").unlink()
    os.symlink(tmp_path / "missing", out / ".work")  # dangling
    _refused(crawl, out, capsys, r"\.work: a symbolic link")
    assert not (tmp_path / "missing").exists()


def test_link_inside_the_work_dir_is_refused(tmp_path, crawl, capsys):
    out = tmp_path / "out"
    build([str(crawl)], out, local_config(exec={"keep_work": True}))
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.bin").write_bytes(b"\x00" * 10)
    os.symlink(mine, out / ".work" / "scan-extra")
    _refused(crawl, out, capsys, r"a symbolic link in the work dir")
    assert _snapshot(mine) == {"data.bin": b"\x00" * 10}


def test_link_to_a_folder_among_the_outputs_entries_is_refused(finished, crawl, tmp_path, capsys):
    out, _ = finished
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "b00.jsonl").write_text("mine")
    shutil.rmtree(out / "index")
    os.symlink(mine, out / "index")  # the build writes index/ files: they would land in `mine`
    _refused(crawl, out, capsys, r"a symbolic link to a folder in the output")
    assert _snapshot(mine) == {"b00.jsonl": b"mine"}


def test_link_to_a_file_among_the_entries_is_replaced_not_written_through(finished, crawl, tmp_path):
    out, _ = finished
    mine = tmp_path / "my-readme.md"
    mine.write_text("my own notes")
    (out / "README.md").unlink()
    os.symlink(mine, out / "README.md")
    build([str(crawl)], out, local_config(), overwrite=True)
    assert mine.read_text() == "my own notes"
    assert not (out / "README.md").is_symlink() and "thresher" in (out / "README.md").read_text().lower()


def test_reset_of_a_work_dir_removes_a_link_never_its_target(tmp_path):
    work = WorkDir(tmp_path / ".work")
    work.root.mkdir()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "f").write_text("x")
    os.symlink(mine, work.path("scan"))
    (work.path("done")).mkdir()
    os.symlink(mine, work.path("done", "inner"))
    reset_workdir(work)
    assert list(work.root.iterdir()) == [] and _snapshot(mine) == {"f": b"x"}
