# SPDX-License-Identifier: MIT
"""Every HOMA_E* code has its exception class (homa._errors)."""
import builtins
import errno

import homa
from homa._homa_cffi import ffi, lib


def test_every_code_has_a_class():
    names = []
    i = 0
    p = ffi.new("const char **")
    while lib.pyhoma_error(i, p):
        names.append(ffi.string(p[0]).decode())
        i += 1
    assert len(names) >= 25
    assert sorted(homa.CODES) == sorted(names)
    for name, code in homa.CODES.items():
        cls = homa.CLASSES[code]
        e = homa.error(code)
        assert type(e) is cls and isinstance(e, homa.HomaError) and isinstance(e, OSError)
        assert e.code == code < 0 and e.name == name
        assert e.strerror == ffi.string(lib.homa_strerror(code)).decode()
        assert e.strerror != "unknown homa error"
        assert cls.__doc__.startswith(name)
        assert getattr(homa, cls.__name__) is cls
        # a distinct class per code
    assert len(set(homa.CLASSES.values())) == len(homa.CODES)


def test_builtin_bases_and_errno():
    assert issubclass(homa.TimeoutError, builtins.TimeoutError)
    assert issubclass(homa.CallTimeoutError, homa.TimeoutError)
    assert issubclass(homa.InvalidArgumentError, ValueError)
    assert issubclass(homa.WouldBlockError, BlockingIOError)
    assert issubclass(homa.NoServerError, ConnectionRefusedError)
    assert issubclass(homa.PermissionError, builtins.PermissionError)
    assert homa.TimeoutError().errno == errno.ETIMEDOUT
    assert homa.CallTimeoutError().errno == errno.ETIME
    assert homa.InvalidArgumentError().errno == errno.EINVAL
    assert homa.ShutdownError().code == homa.CODES["HOMA_ESHUTDOWN"]
    e = homa.InvalidArgumentError(message="bad thing")
    assert str(e).endswith("bad thing") and e.code == homa.CODES["HOMA_EINVAL"]


def test_unknown_code_is_homa_error():
    e = homa.error(-999)
    assert type(e) is homa.HomaError and e.code == -999 and e.strerror == "unknown homa error"
