"""Listening TCP sockets of a set of processes, read from /proc (no third-party package): each
process's socket inodes from /proc/PID/fd, matched against the LISTEN rows of /proc/net/tcp{,6}."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

LISTEN = "0A"


def _address(hex_address: str) -> str:
    """A /proc/net/tcp address (`0100007F` or 32 hex digits of IPv6) as text. The kernel prints each
    32-bit word of the address in host byte order (little-endian here)."""
    raw = bytes.fromhex(hex_address)
    host_order = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(host_order))


def listening_by_inode() -> dict[int, tuple[str, int]]:
    found: dict[int, tuple[str, int]] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], int(fields[9])
            if state == LISTEN:
                host, port = local.split(":")
                found[inode] = (_address(host), int(port, 16))
    return found


def socket_inodes(pid: int) -> set[int]:
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[len("socket:[") : -1]))
    return inodes


def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(")") + 2 :].split()[1])
    return parents


def descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def processes_mentioning(text: str) -> set[int]:
    """Processes whose command line holds `text` (a session folder: Ray's daemons may be reparented)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if text.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.add(int(entry))
            except OSError:
                continue
    return found


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def listeners(pids: set[int]) -> list[tuple[int, str, str, int]]:
    """(pid, command, address, port) for every listening TCP socket the processes hold."""
    table = listening_by_inode()
    return sorted(
        (pid, command_name(pid), *table[inode]) for pid in pids for inode in socket_inodes(pid) if inode in table
    )


def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback
