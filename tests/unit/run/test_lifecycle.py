"""A kill at every step of a build's finish leaves a folder the rerun of the same command, and
`--overwrite`, take up: exit 0, byte-identical shards, no work dir left (issue 36, item 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tests.conftest import article_html, write_jsonl

import thresher.run.build as build_module
import thresher.run.finalize as finalize_module
import thresher.run.lifecycle as lifecycle
from thresher.cli import main


class Killed(BaseException):
    """A kill: not an `Exception`, so nothing on the way up handles it."""


def _kill(*args, **kwargs):
    raise Killed


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lifecycle")
    return write_jsonl(folder / "crawl.jsonl", [{"url": f"https://l.example/{i}", "html": article_html(i)}
                                                for i in range(40)])


def _build(crawl: Path, out: Path, *extra: str) -> int:
    return main(["build", str(crawl), "-o", str(out), "--engine", "local", "--quality", "none", "-q",
                 "--output-shard-max-records", "10", *extra])


@pytest.fixture(scope="module")
def reference(crawl, tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "out"
    assert _build(crawl, out) == 0
    return _files(out)


def _files(out: Path) -> dict[str, bytes]:
    """The dataset's files that do not vary from run to run (stats.json holds timings)."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in ("stats.json", "README.md")}


def _half_rmtree(real=shutil.rmtree):
    calls = []

    def rmtree(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 2:  # the sweep has deleted one folder of the work dir: killed in the next
            raise Killed
        real(path, *args, **kwargs)

    return rmtree


def _index_write_cut():
    def write_observations(out, work, partitions, documents):
        # what `atomic_open` leaves when a kill lands in the copy of an index bucket into the output
        (Path(out.root) / "index").mkdir(exist_ok=True)
        (Path(out.root) / "index" / ".ids-0000.jsonl.gz.tmp-99999").write_bytes(b"half a bucket")
        (Path(out.root) / ".stats.json.tmp-99999").write_bytes(b"{")
        raise Killed

    return write_observations


def _rmdir_of_retired(real=Path.rmdir):
    def rmdir(self):
        if self.name.startswith(".work.done-"):  # the marker is gone, the folder not yet
            raise Killed
        real(self)

    return rmdir


# each step of the finish, by the call a kill there would have stopped
STEPS = {
    "before the manifest": (finalize_module, "write_observations", lambda: _kill),
    "during an index write": (finalize_module, "write_observations", _index_write_cut),
    "after the manifest": (build_module, "finish", lambda: _kill),
    "after the marker": (lifecycle, "retire", lambda: _kill),
    "after the rename": (lifecycle, "sweep", lambda: _kill),
    "during the sweep": (lifecycle.shutil, "rmtree", _half_rmtree),
    "after the marker's removal": (Path, "rmdir", _rmdir_of_retired),
}


def _killed_at(step: str, crawl: Path, out: Path, monkeypatch, *extra: str) -> None:
    module, name, make = STEPS[step]
    with monkeypatch.context() as patch:
        patch.setattr(module, name, make())
        with pytest.raises(Killed):
            _build(crawl, out, *extra)


@pytest.mark.parametrize("overwrite", [False, True], ids=["rerun", "overwrite"])
@pytest.mark.parametrize("step", list(STEPS))
def test_a_kill_at_each_step_of_the_finish_is_taken_up_by_the_rerun(crawl, reference, tmp_path, monkeypatch, step,
                                                                    overwrite):
    out = tmp_path / "out"
    _killed_at(step, crawl, out, monkeypatch)
    assert _build(crawl, out, *(["--overwrite"] if overwrite else [])) == 0
    assert _files(out) == reference
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


def test_the_folders_a_sweep_leaves_are_thresher_s(crawl, reference, tmp_path, monkeypatch):
    """Retired work dirs at every point of their sweep, side by side: a marker and part of the
    files, only the marker, nothing (the marker gone, the folder not yet)."""
    out = tmp_path / "out"
    assert _build(crawl, out) == 0
    for name, files in (("a", {"finished.json": '{"finished": true, "plan": null}', "lock": ""}),
                        ("b", {"finished.json": '{"finished": true, "plan": null}'}), ("c", {})):
        folder = out / f".work.done-{name}"
        (folder / "scan").mkdir(parents=True)
        if not files:
            shutil.rmtree(folder / "scan")
        for file, text in files.items():
            (folder / file).write_text(text)
    assert _build(crawl, out, "--overwrite") == 0
    assert _files(out) == reference
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_an_older_thresher_s_half_deleted_work_dir_is_replaced_with_overwrite(crawl, reference, tmp_path):
    """The issue's repro: `.work` without its plan beside a finished dataset."""
    out = tmp_path / "out"
    assert _build(crawl, out) == 0
    (out / ".work" / "scan").mkdir(parents=True)
    (out / ".work" / "done").mkdir()
    assert _build(crawl, out, "--overwrite") == 0
    assert _files(out) == reference
    assert not (out / ".work").exists()


def test_a_kill_before_the_plan_leaves_a_work_dir_the_rerun_takes(crawl, reference, tmp_path):
    out = tmp_path / "out"
    (out / ".work").mkdir(parents=True)
    (out / ".work" / "lock").write_text("")
    (out / ".work" / "stdin.bin.tmp").write_bytes(b"half a spool")
    assert _build(crawl, out) == 0
    assert _files(out) == reference


def test_a_folder_named_like_a_retired_work_dir_without_its_marker_is_left_alone(crawl, tmp_path):
    out = tmp_path / "out"
    assert _build(crawl, out) == 0
    mine = out / ".work.done-mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert _build(crawl, out, "--overwrite") == 0
    assert (mine / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize("step", ["after the rename", "during the sweep"])
def test_a_work_dir_elsewhere_is_swept_of_its_staged_shards(crawl, reference, tmp_path, monkeypatch, step):
    out, work = tmp_path / "out", tmp_path / "stage"
    _killed_at(step, crawl, out, monkeypatch, "--work-dir", str(work))
    assert _build(crawl, out, "--work-dir", str(work)) == 0
    assert _files(out) == reference
    assert list(work.iterdir()) == []  # the staged shards and the retired work dir are gone


def test_a_marker_in_the_output_never_deletes_the_dataset_s_shards(crawl, reference, tmp_path):
    """Staged files are deleted only from a stage that is not the output: there they are the dataset."""
    out = tmp_path / "out"
    assert _build(crawl, out) == 0
    retired = out / ".work.done-0000000000000000-1-1"
    retired.mkdir()
    (retired / "finished.json").write_text('{"finished": true, "plan": null, "staged": ["shard-00000.jsonl.gz"]}')
    assert _build(crawl, out) == 1  # swept, then refused: another plan's dataset, and no --overwrite
    assert not retired.exists()
    assert _files(out) == reference
