"""Fixtures of the fetch tests: a loopback farm, and a guard that fails any connection attempt to
an address outside loopback (a refused target must be refused before a socket is opened)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator

import pytest
from fetch_helpers import FARM_ADDRESS


class ConnectGuard:
    def __init__(self) -> None:
        self.attempts: list[tuple[str, int]] = []
        self.refused: list[tuple[str, int]] = []


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> ConnectGuard:
    guard = ConnectGuard()
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(address: object) -> None:
        if isinstance(address, tuple):
            host = str(address[0])
            guard.attempts.append((host, int(address[1])))
            if not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback:
                guard.refused.append((host, int(address[1])))
                raise AssertionError(f"a connection to {host} was attempted")

    def connect(self: socket.socket, address: object) -> None:
        check(address)
        return real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        check(address)
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return guard


@pytest.fixture
def farm_factory() -> Iterator[object]:
    pytest.importorskip("aiohttp")  # the fetch extra
    pytest.importorskip("protego")
    from thresher.fetch.farm import FarmThread

    threads: list[FarmThread] = []

    def start(specs: dict[str, object] | None = None) -> object:
        thread = FarmThread(specs, FARM_ADDRESS)
        threads.append(thread)
        return thread.__enter__()

    yield start
    for thread in threads:
        thread.__exit__(None, None, None)
