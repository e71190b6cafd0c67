"""The zero-dependency promise, enforced: the core imports only the standard library, no module
imports a third-party package at import time, and a plain install resolves no dependency."""

import ast
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "thresher"
STDLIB = set(sys.stdlib_module_names)


def imports(path: Path, top_level_only: bool):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    if top_level_only:  # also look inside top-level try/if blocks
        stack = list(nodes)
        nodes = []
        while stack:
            node = stack.pop()
            nodes.append(node)
            if isinstance(node, (ast.Try, ast.If)):
                stack.extend(
                    node.body + node.orelse + [h for handler in getattr(node, "handlers", []) for h in handler.body]
                )
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node.lineno


def test_core_imports_only_the_standard_library_anywhere():
    offenders = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for path in sorted((SRC / "core").rglob("*.py"))
        for name, line in imports(path, top_level_only=False)
        if name not in STDLIB and name != "thresher"
    ]
    assert offenders == []


def test_no_module_imports_a_third_party_package_at_import_time():
    # extras (numpy, pyarrow, trafilatura, ...) may only be imported lazily, inside functions
    offenders = [
        f"{path.relative_to(SRC)}:{line} imports {name}"
        for path in sorted(SRC.rglob("*.py"))
        for name, line in imports(path, top_level_only=True)
        if name not in STDLIB and name != "thresher"
    ]
    assert offenders == []


def test_package_imports_and_runs_without_any_third_party_module():
    code = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "allowed = set(sys.stdlib_module_names) | {'thresher'}\n"
        "def guard(name, globals=None, locals=None, fromlist=(), level=0):\n"
        "    if level == 0 and name.split('.')[0] not in allowed: raise ImportError('blocked ' + name)\n"
        "    return real(name, globals, locals, fromlist, level)\n"
        "builtins.__import__ = guard\n"
        "import thresher.cli, thresher.run.build, thresher.pipeline\n"
        "from thresher.pipeline import Pipeline\n"
        "from thresher.demo import generate_crawl\n"
        "import json\n"
        "pages = [json.loads(line) for line in generate_crawl(40) if line.endswith('}')]\n"
        "docs = list(Pipeline().process(pages))\n"
        "print(len(docs))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) > 10, out.stderr


@pytest.mark.slow
def test_plain_install_into_a_fresh_venv_resolves_zero_dependencies(tmp_path):
    root = SRC.parents[1]
    dist = tmp_path / "dist"
    # build the wheel with this environment's build tools (the dev extra has setuptools and wheel)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(root),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("thresher-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    report = tmp_path / "report.json"
    # --no-index: with any declared dependency this install would fail, as nothing can be fetched
    # without the caller's PYTHONPATH: a source tree on it (with its egg-info) reads as thresher installed
    clean_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [py, "-m", "pip", "install", "--quiet", "--no-index", "--report", str(report), str(wheel)],
        check=True,
        capture_output=True,
        env=clean_env,
    )
    installed = json.loads(report.read_text())["install"]
    assert [item["metadata"]["name"] for item in installed] == ["thresher"]
    requires = installed[0]["metadata"].get("requires_dist") or []
    assert all("extra ==" in req for req in requires), requires  # only optional extras
    version = subprocess.run([env_dir / "bin" / "thresher", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("thresher ")
