# SPDX-License-Identifier: MIT
"""Python ints into C integers: the binding's one range check.

Every integer the binding stores into a C field or passes to a C function
goes through c_int() (or set_int(), for a struct field), so a value the C
type cannot hold (negative in an unsigned type, too large, not 0 or 1 in
a bool) raises homa.InvalidArgumentError naming the argument, not cffi's
OverflowError. A value that is not an int (float, str, None) raises
TypeError, as cffi does. The range the library accepts within the type is
left to the C library to check (it returns HOMA_EINVAL).
"""
from __future__ import annotations

import functools
from typing import Any, Tuple, Union

from . import _errors
from ._homa_cffi import ffi


@functools.lru_cache(maxsize=None)
def c_range(ctype: Union[str, Any]) -> Tuple[int, int]:
    """(lowest, highest) value of the C integer type @ctype (its name, or
    a cffi CType of kind "primitive"); (0, 1) for bool."""
    t = ffi.typeof(ctype) if isinstance(ctype, str) else ctype
    if t.cname == "_Bool":
        return 0, 1
    bits = 8 * ffi.sizeof(t)
    if int(ffi.cast(t, -1)) < 0:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def c_int(ctype: Union[str, Any], name: str, value: Any) -> int:
    """@value, checked to fit the C integer type @ctype (a name such as
    "uint16_t", or a cffi CType). Raises TypeError when @value is not an
    int, InvalidArgumentError naming @name when the type cannot hold it."""
    if not isinstance(value, int):
        raise TypeError("%s: an integer is required, not %s" % (name, type(value).__name__))
    lo, hi = c_range(ctype)
    if not lo <= value <= hi:
        t = ctype if isinstance(ctype, str) else ctype.cname.replace("_Bool", "bool")
        raise _errors.InvalidArgumentError(
            _errors.CODES["HOMA_EINVAL"],
            "%s: %r does not fit its C type %s (%d to %d)" % (name, value, t, lo, hi))
    return value


@functools.lru_cache(maxsize=None)
def _field_type(struct: Any, field: str) -> Any:
    """The CType of @field in the struct CType @struct; AttributeError when
    the binding does not know the field."""
    for fname, f in struct.fields:
        if fname == field:
            return f.type
    raise AttributeError("%s has no field %r" % (struct.cname, field))


def set_int(obj: Any, field: str, value: Any, name: str = "") -> None:
    """Set the integer (or bool) @field of the C struct @obj (a struct or
    a pointer to one) to @value, checked by c_int() under @name (default:
    @field): TypeError for a value that is not an int,
    InvalidArgumentError for one the field's C type cannot hold. A field
    of another kind (an array) is set as cffi sets it (TypeError for an
    int)."""
    t = ffi.typeof(obj)
    if t.kind == "pointer":
        t = t.item
    ft = _field_type(t, field)
    if ft.kind == "primitive":
        value = c_int(ft, name or field, value)
    setattr(obj, field, value)   # other kinds (arrays): cffi's own TypeError
