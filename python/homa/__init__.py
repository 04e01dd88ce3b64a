# SPDX-License-Identifier: MIT
"""homa: Python binding of the userspace Homa transport (libhoma).

    import homa
    with homa.Socket(server=True, port=4000, bind_addr="127.0.0.1") as srv, \\
         homa.Socket() as cli:
        rpc = cli.send_request(("127.0.0.1", 4000), b"ping")
        req = srv.recv_request()
        req.reply(b"pong")
        print(bytes(cli.recv_response(rpc).data))

homa.aio has the same sockets for asyncio. Errors are exceptions, one
class per HOMA_E* code (homa.TimeoutError, homa.ShutdownError, ...), all
subclasses of homa.HomaError. See docs/PYTHON.md.
"""
from ._errors import *  # noqa: F401,F403  (one class per HOMA_E* code)
from ._errors import CLASSES, CODES, HomaError, error  # noqa: F811
from ._socket import Address, Message, Request, Socket, default_settings
from . import _errors, aio

__all__ = ["Socket", "Message", "Request", "Address", "CLASSES", "CODES",
           "default_settings", "aio"] + _errors.__all__
__version__ = "0.1.0"
