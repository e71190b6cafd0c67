"""Target safety: private and reserved targets refused after DNS, before any connection."""

from __future__ import annotations

import asyncio

import pytest

from thresher.fetch.safety import PinnedResolver, ResolveFailed, TargetRefused, refusal_reason, static_resolver


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
        ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fc00::1", "private"),
        ("169.254.169.254", "link_local"), ("fe80::1", "link_local"),
        ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"), ("::", "unspecified"),
        ("100.64.0.1", "shared"),
        ("240.0.0.1", "private"), ("192.0.2.1", "private"), ("2001:db8::1", "private"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"), ("::ffff:169.254.169.254", "link_local"),
        ("64:ff9b::7f00:1", "loopback"), ("2002:a00:1::", "private"), ("::127.0.0.1", "loopback"),
        ("8.8.8.8", None), ("2001:4860:4860::8888", None), ("::ffff:8.8.8.8", None),
    ],
)
def test_refusal_reason_of_each_address_kind(address: str, reason: str | None) -> None:
    assert refusal_reason(address) == reason


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def test_a_name_resolving_to_a_private_address_is_refused_after_dns() -> None:
    guard = PinnedResolver(static_resolver({"intranet.test": "10.0.0.5", "meta.test": "169.254.169.254"}))
    with pytest.raises(TargetRefused) as info:
        run(guard.check("intranet.test", 80))
    assert (info.value.reason, info.value.address) == ("private", "10.0.0.5")
    with pytest.raises(TargetRefused) as info:
        run(guard.check("meta.test", 80))
    assert info.value.reason == "link_local"
    assert guard.refused == 2


def test_only_the_checked_addresses_are_handed_to_the_client() -> None:
    pytest.importorskip("aiohttp")
    # a name answering a public and a private address: only the public one may be connected to
    guard = PinnedResolver(static_resolver({"mixed.test": ["10.0.0.1", "93.184.216.34"]}))
    assert run(guard.check("mixed.test", 80)) == ["93.184.216.34"]
    calls: list[str] = []

    async def counting(host: str, port: int) -> list[str]:
        calls.append(host)
        return ["93.184.216.34"]

    pinned = PinnedResolver(counting)
    run(pinned.check("once.test", 80))
    resolved = run(pinned.for_aiohttp().resolve("once.test", 80))
    assert [r["host"] for r in resolved] == ["93.184.216.34"]  # type: ignore[index]
    assert calls == ["once.test"]  # the client's lookup is answered from the pin, not a second DNS query


def test_literal_addresses_are_checked_without_dns() -> None:
    guard = PinnedResolver(static_resolver({}))
    for host, reason in (
        ("127.0.0.1", "loopback"),
        ("[::1]", "loopback"),
        ("[::ffff:7f00:1]", "loopback"),
        ("10.0.0.1", "private"),
    ):
        with pytest.raises(TargetRefused) as info:
            run(guard.check(host, 80))
        assert info.value.reason == reason


def test_allow_private_and_allow_networks_opt_in() -> None:
    assert run(PinnedResolver(static_resolver({}), allow_private=True).check("10.0.0.1", 80)) == ["10.0.0.1"]
    narrow = PinnedResolver(static_resolver({}), allow_networks=("127.0.0.2/32",))
    assert run(narrow.check("127.0.0.2", 80)) == ["127.0.0.2"]
    with pytest.raises(TargetRefused):
        run(narrow.check("127.0.0.1", 80))


def test_a_name_that_does_not_resolve_fails_as_dns() -> None:
    with pytest.raises(ResolveFailed):
        run(PinnedResolver(static_resolver({})).check("nowhere.test", 80))


def test_the_system_resolver_path_refuses_localhost() -> None:
    # getaddrinfo answers "localhost" from the hosts file: no traffic, and the answer is loopback
    from thresher.fetch.safety import system_resolve

    guard = PinnedResolver(system_resolve)
    with pytest.raises(TargetRefused) as info:
        run(guard.check("localhost", 80))
    assert info.value.reason == "loopback"
