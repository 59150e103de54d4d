"""Proof that an embedding candidate runs offline: hub downloads off, sockets kept on loopback.

``install()`` must run before any candidate is imported. Every connection to an address
other than 127.0.0.1 / ::1 is refused before a packet leaves (and counted), so a candidate
that tries to download fails loudly instead of quietly succeeding on a networked machine.
"""

from __future__ import annotations

import os
import socket

LOOPBACK = ("127.0.0.1", "::1", "localhost")
REFUSED: list[str] = []
_REAL_CONNECT = socket.socket.connect
_REAL_CONNECT_EX = socket.socket.connect_ex


def allowed(family: int, address: object) -> bool:
    """Whether a connection may proceed: non-IP sockets and loopback addresses only."""
    if family not in (socket.AF_INET, socket.AF_INET6):
        return True
    host = address[0] if isinstance(address, tuple) else str(address)
    return host in LOOPBACK


def _guard(self: socket.socket, address: object) -> None:
    if not allowed(self.family, address):
        REFUSED.append(str(address))
        raise OSError(f"bench: network refused ({address}); candidates must run offline")


def _connect(self: socket.socket, address: object) -> None:
    _guard(self, address)
    _REAL_CONNECT(self, address)


def _connect_ex(self: socket.socket, address: object) -> int:
    _guard(self, address)
    return _REAL_CONNECT_EX(self, address)


def install() -> None:
    """Disable hub downloads and refuse non-loopback sockets in this process."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]


def proof() -> str:
    """One line saying how the run was kept offline and whether anything tried to leave."""
    hub = os.environ.get("HF_HUB_OFFLINE")
    return f"HF_HUB_OFFLINE={hub}, socket guard on, refused connections: {len(REFUSED)}"
