"""A local Ray instance started by thresher listens on loopback only and keeps its session files
private (issue 13: Ray's GCS and raylet listened on every interface, its session folder was
world-writable). Read from the process table and the kernel's socket tables, not from Ray."""

from __future__ import annotations

import ipaddress
import os
import stat

import pytest
from tests.reliability import sockets

from thresher.run.calls import TaskCall


@pytest.mark.slow
def test_local_ray_instance_listens_on_loopback_only_and_its_session_folder_is_private():
    ray = pytest.importorskip("ray")
    from thresher.run.ray_engine import _CLUSTER_MODE_VARIABLE, RayEngine

    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    import importlib

    constants = importlib.import_module("ray._private.ray_constants")
    before = os.environ.get(_CLUSTER_MODE_VARIABLE), constants.ENABLE_RAY_CLUSTER
    engine = RayEngine(workers=1)
    try:
        [worker_pid] = engine.run([TaskCall(fn=os.getpid, args=(), label="pid")])  # a worker, with its own server
        assert engine.temp_dir is not None
        pids = sockets.descendants(os.getpid()) | sockets.processes_mentioning(engine.temp_dir) | {os.getpid()}
        assert worker_pid in pids
        found = sockets.listeners(pids)
        names = {name for _, name, _, _ in found}
        # the daemons the issue found on every interface are seen (so the check below is not vacuous)
        assert {"gcs_server", "raylet"} <= names, found
        assert worker_pid in {pid for pid, *_ in found}, found
        exposed = [entry for entry in found if not sockets.is_loopback(entry[2])]
        assert exposed == [], f"Ray servers reachable from outside the machine: {exposed}"
        # the session files: Ray makes its folders world-writable, so they must sit in one that only
        # the user can enter, which Ray has not opened up after its workers started
        top = os.stat(engine.temp_dir)
        assert (stat.S_IMODE(top.st_mode), top.st_uid) == (0o700, os.getuid())
        sessions = [p for p in os.scandir(os.path.join(engine.temp_dir, "ray")) if p.name.startswith("session_")]
        assert sessions, "Ray's session folder is not under the private folder"
    finally:
        engine.close()
    # Ray's own default is back for a later ray.init by a library caller
    assert (os.environ.get(_CLUSTER_MODE_VARIABLE), constants.ENABLE_RAY_CLUSTER) == before


def test_proc_socket_table_addresses_decode():
    assert sockets._address("0100007F") == "127.0.0.1"
    assert sockets._address("00000000000000000000000001000000") == "::1"
    mapped = sockets._address("0000000000000000FFFF00000100007F")
    assert ipaddress.ip_address(mapped) == ipaddress.ip_address("::ffff:127.0.0.1")
    assert sockets.is_loopback("::ffff:127.0.0.1") and sockets.is_loopback("::1")
    assert not sockets.is_loopback("::") and not sockets.is_loopback("0.0.0.0") and not sockets.is_loopback("192.0.2.2")
