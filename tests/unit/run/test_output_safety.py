"""A build touches only what thresher wrote (issue 13, output safety; issue 14 item 9): a folder is a
dataset only by a manifest thresher wrote, only shards that manifest listed are deleted, an output
inside an input folder (or an input inside the output) is refused, and a finished dataset is
replaced only with --overwrite."""

import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.errors import WorkDirError
from thresher.run.build import build


def crawl(path, n=12, start=0):
    return write_jsonl(
        path, [{"url": f"https://s.example/{i}", "html": article_html(i)} for i in range(start, start + n)]
    )


def test_a_file_named_manifest_json_does_not_make_a_dataset(tmp_path):
    src = crawl(tmp_path / "crawl.jsonl")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "manifest.json").write_text('{"my": "own notes"}')
    (out / "shard-00000.jsonl.gz").write_bytes(b"my own file")
    with pytest.raises(WorkDirError, match="not empty and not a thresher dataset"):
        build([str(src)], out, local_config())
    assert (out / "shard-00000.jsonl.gz").read_bytes() == b"my own file"
    assert (out / "manifest.json").read_text() == '{"my": "own notes"}'


def test_a_dot_work_folder_thresher_did_not_make_is_refused(tmp_path):
    src = crawl(tmp_path / "crawl.jsonl")
    out = tmp_path / "mine"
    (out / ".work").mkdir(parents=True)
    (out / ".work" / "notes.txt").write_text("keep me")
    with pytest.raises(WorkDirError, match="its .work was not made by thresher"):
        build([str(src)], out, local_config())
    assert (out / ".work" / "notes.txt").read_text() == "keep me"


def test_a_finished_dataset_is_replaced_only_with_overwrite(tmp_path):
    out = tmp_path / "out"
    first = build([str(crawl(tmp_path / "a.jsonl"))], out, local_config())
    with pytest.raises(WorkDirError, match="holds a finished dataset; pass --overwrite to replace it"):
        build([str(crawl(tmp_path / "b.jsonl", start=100))], out, local_config())
    assert json.loads((out / "manifest.json").read_text()) == first.manifest  # untouched
    second = build([str(tmp_path / "b.jsonl")], out, local_config(), overwrite=True)
    assert second.manifest != first.manifest


def test_only_shards_the_previous_manifest_listed_are_deleted(tmp_path):
    out = tmp_path / "out"
    config = local_config(output={"shard_max_records": 3})
    first = build([str(crawl(tmp_path / "a.jsonl", n=12))], out, config)
    assert len(first.manifest["shards"]) == 4
    (out / "shard-00099.jsonl.gz").write_bytes(b"a user's file with a shard-like name")
    second = build([str(crawl(tmp_path / "b.jsonl", n=3))], out, config, overwrite=True)
    assert [s["path"] for s in second.manifest["shards"]] == ["shard-00000.jsonl.gz"]
    assert not (out / "shard-00003.jsonl.gz").exists()  # listed by the previous manifest: removed
    assert (out / "shard-00099.jsonl.gz").read_bytes() == b"a user's file with a shard-like name"


def test_output_inside_an_input_folder_is_refused(tmp_path):
    folder = tmp_path / "crawl"
    folder.mkdir()
    crawl(folder / "part.jsonl")
    with pytest.raises(WorkDirError, match="inside the input folder"):
        build([str(folder)], folder / "dataset", local_config())
    assert not (folder / "dataset").exists()


def test_input_inside_the_output_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    src = crawl(out / "crawl.jsonl")
    with pytest.raises(WorkDirError, match="the input is inside the output"):
        build([str(src)], out, local_config())


def test_an_unfinished_rebuild_leaves_no_card_that_would_load_as_complete(tmp_path):
    from thresher.core.errors import TaskError
    from thresher.run.phases import DEFAULT_TASKS

    out = tmp_path / "out"
    config = local_config(output={"shard_max_records": 3}, exec={"retries": 0})
    build([str(crawl(tmp_path / "a.jsonl"))], out, config)
    assert (out / "README.md").read_text().startswith("---\nconfigs:")

    def crashing_write_task(ctx, p, start, stages=(), following=()):
        raise RuntimeError("simulated crash")

    with pytest.raises(TaskError, match="simulated crash"):
        build([str(tmp_path / "a.jsonl")], out, config, overwrite=True,
              tasks=DEFAULT_TASKS.replace(write=crashing_write_task))
    assert not (out / "manifest.json").exists() and not (out / "README.md").exists()
    resumed = build([str(tmp_path / "a.jsonl")], out, config)
    assert (out / "README.md").read_text().startswith("---\nconfigs:") and resumed.manifest["complete"]


def test_a_readme_thresher_did_not_write_is_not_removed_by_a_build(tmp_path):
    from thresher.run.safety import own_card, remove_own_card
    from thresher.write.storage import LocalStore

    store = LocalStore(tmp_path)
    (tmp_path / "README.md").write_text("# My notes\n\nBuilt by hand.\n")
    assert not own_card(store)
    remove_own_card(store)
    assert (tmp_path / "README.md").exists()
    (tmp_path / "README.md").write_text("---\nconfigs: []\n---\n\n# Dataset card\n\nBuilt by thresher 0.1.0 ...")
    assert own_card(store)
    remove_own_card(store)
    assert not (tmp_path / "README.md").exists()
