# SPDX-License-Identifier: MIT
"""Exceptions: one class per HOMA_E* code of <homa/errors.h>.

Every class derives from HomaError, itself an OSError, and carries:
  code    the negative HOMA_E* value the C function returned
  name    its C name ("HOMA_ETIMEDOUT")
  errno   the nearest POSIX errno (errno.ETIMEDOUT), as OSError has it
  strerror  homa_strerror()'s text
Where a builtin exception means the same thing the class derives from it
too, so `except TimeoutError` catches homa.TimeoutError.
"""
from __future__ import annotations

import builtins
import errno as _errno
from typing import Dict, List, Optional, Type

from ._homa_cffi import ffi, lib


class HomaError(OSError):
    """A homa function failed; `code` is its negative HOMA_E* value."""

    code: int = 0
    name: str = "HOMA_OK"
    posix: int = 0

    def __init__(self, code: Optional[int] = None, message: Optional[str] = None) -> None:
        if code is None:
            code = type(self).code
        text = ffi.string(lib.homa_strerror(code)).decode()
        super().__init__(_POSIX.get(code, 0), message or text)
        self.code = code
        self.name = _NAMES.get(code, "HOMA_E%d" % -code)


class InvalidArgumentError(HomaError, ValueError):
    """HOMA_EINVAL: an argument is NULL, out of range or inconsistent."""

    name = "HOMA_EINVAL"
    posix = _errno.EINVAL


class OutOfMemoryError(HomaError):
    """HOMA_ENOMEM: an allocation failed."""

    name = "HOMA_ENOMEM"
    posix = _errno.ENOMEM


class WouldBlockError(HomaError, builtins.BlockingIOError):
    """HOMA_EAGAIN: would block, and the call was told not to wait (timeout 0); retry later."""

    name = "HOMA_EAGAIN"
    posix = _errno.EAGAIN


class MessageTooLongError(HomaError):
    """HOMA_EMSGSIZE: message longer than settings.max_message."""

    name = "HOMA_EMSGSIZE"
    posix = _errno.EMSGSIZE


class NotFoundError(HomaError):
    """HOMA_ENOTFOUND: no RPC with that id (never existed, or already finished)."""

    name = "HOMA_ENOTFOUND"
    posix = _errno.ENOENT


class TimeoutError(HomaError, builtins.TimeoutError):
    """HOMA_ETIMEDOUT: the peer stopped answering; the RPC was aborted."""

    name = "HOMA_ETIMEDOUT"
    posix = _errno.ETIMEDOUT


class CanceledError(HomaError):
    """HOMA_ECANCELED: the RPC was aborted by this application (abort())."""

    name = "HOMA_ECANCELED"
    posix = _errno.ECANCELED


class ShutdownError(HomaError):
    """HOMA_ESHUTDOWN: the socket is closed."""

    name = "HOMA_ESHUTDOWN"
    posix = _errno.ESHUTDOWN


class AddressInUseError(HomaError):
    """HOMA_EADDRINUSE: the port is already bound."""

    name = "HOMA_EADDRINUSE"
    posix = _errno.EADDRINUSE


class PermissionError(HomaError, builtins.PermissionError):
    """HOMA_EPERM: missing privilege (raw IP needs CAP_NET_RAW)."""

    name = "HOMA_EPERM"
    posix = _errno.EPERM


class ProtocolError(HomaError):
    """HOMA_EPROTO: malformed packet."""

    name = "HOMA_EPROTO"
    posix = _errno.EPROTO


class StateError(HomaError):
    """HOMA_ESTATE: operation not valid in the RPC's state (e.g. a second reply)."""

    name = "HOMA_ESTATE"
    posix = _errno.EBUSY


class IOError(HomaError):
    """HOMA_EIO: a system call failed."""

    name = "HOMA_EIO"
    posix = _errno.EIO


class NoSpaceError(HomaError):
    """HOMA_ENOSPC: the caller's output buffer is too small."""

    name = "HOMA_ENOSPC"
    posix = _errno.ENOSPC


class NotSupportedError(HomaError):
    """HOMA_ENOTSUP: feature not available (address family, driver)."""

    name = "HOMA_ENOTSUP"
    posix = _errno.ENOTSUP


class PeerDeadError(HomaError, builtins.ConnectionError):
    """HOMA_EPEERDEAD: the peer timed out recently; new RPCs to it fail at once."""

    name = "HOMA_EPEERDEAD"
    posix = _errno.EHOSTDOWN


class NoServerError(HomaError, builtins.ConnectionRefusedError):
    """HOMA_ENOSERVER: nothing serves at the destination port (it said so, or ICMP unreachable came back)."""

    name = "HOMA_ENOSERVER"
    posix = _errno.ECONNREFUSED


class CallTimeoutError(TimeoutError):
    """HOMA_ETIME: the call's own timeout expired before it could complete."""

    name = "HOMA_ETIME"
    posix = _errno.ETIME


class AbandonedError(HomaError, builtins.ConnectionAbortedError):
    """HOMA_EABANDONED: the server finished or dropped the RPC without a response reaching us."""

    name = "HOMA_EABANDONED"
    posix = _errno.ECONNABORTED


class AddressNotAvailableError(HomaError):
    """HOMA_EADDRNOTAVAIL: the bind address is not an address of this host."""

    name = "HOMA_EADDRNOTAVAIL"
    posix = _errno.EADDRNOTAVAIL


class AlreadyReleasedError(HomaError):
    """HOMA_EALREADY: the message was already released."""

    name = "HOMA_EALREADY"
    posix = _errno.EALREADY


class NoAssociationError(HomaError):
    """HOMA_ENOASSOC: encrypted socket: no security association for that destination."""

    name = "HOMA_ENOASSOC"
    posix = _errno.ENOKEY


class CertificateError(HomaError):
    """HOMA_ECERT: key exchange: a certificate was rejected."""

    name = "HOMA_ECERT"
    posix = _errno.EKEYREJECTED


class KeyExpiredError(HomaError):
    """HOMA_EKEYEXPIRED: the SPI has expired (its master key rotated out)."""

    name = "HOMA_EKEYEXPIRED"
    posix = _errno.EKEYEXPIRED


class HandshakeError(HomaError):
    """HOMA_EHANDSHAKE: key exchange: the peer refused or failed the handshake or request."""

    name = "HOMA_EHANDSHAKE"
    posix = _errno.ECONNREFUSED


_POSIX: Dict[int, int] = {}
_NAMES: Dict[int, str] = {}
#: HOMA_E* code -> exception class, for every code the library defines.
CLASSES: Dict[int, Type[HomaError]] = {}
#: HOMA_E* name -> its value (as in errors.h).
CODES: Dict[str, int] = {}


def _build() -> None:
    """Give each class its code from the compiled library (errors.h); a
    code this module has no class for gets a generic HomaError subclass."""
    by_name: Dict[str, Type[HomaError]] = {c.name: c for c in _all_subclasses(HomaError)}
    name_p = ffi.new("const char **")
    i = 0
    while True:
        code = lib.pyhoma_error(i, name_p)
        if code == 0:
            break
        i += 1
        name = ffi.string(name_p[0]).decode()
        cls = by_name.get(name)
        if cls is None:
            cls = type(name[len("HOMA_E"):].capitalize() + "Error", (HomaError,),
                       {"name": name, "posix": 0, "__module__": "homa", "__doc__": name + "."})
        cls.code = code
        _POSIX[code], _NAMES[code], CLASSES[code], CODES[name] = cls.posix, name, cls, code


def _all_subclasses(cls: Type[HomaError]) -> List[Type[HomaError]]:
    """Every subclass of @cls, recursively."""
    out: List[Type[HomaError]] = []
    for c in cls.__subclasses__():
        out.append(c)
        out.extend(_all_subclasses(c))
    return out


_build()


def error(code: int, message: Optional[str] = None) -> HomaError:
    """The exception for a negative HOMA_E* @code (HomaError if unknown)."""
    return CLASSES.get(code, HomaError)(code, message)


def check(ret: int) -> int:
    """Return @ret if it is not negative; raise its exception otherwise."""
    if ret < 0:
        raise error(ret)
    return ret


__all__ = [
    "HomaError",
    "InvalidArgumentError",
    "OutOfMemoryError",
    "WouldBlockError",
    "MessageTooLongError",
    "NotFoundError",
    "TimeoutError",
    "CanceledError",
    "ShutdownError",
    "AddressInUseError",
    "PermissionError",
    "ProtocolError",
    "StateError",
    "IOError",
    "NoSpaceError",
    "NotSupportedError",
    "PeerDeadError",
    "NoServerError",
    "CallTimeoutError",
    "AbandonedError",
    "AddressNotAvailableError",
    "AlreadyReleasedError",
    "NoAssociationError",
    "CertificateError",
    "KeyExpiredError",
    "HandshakeError",
    "error",
    "check",
]
