# SPDX-License-Identifier: MIT
"""Integers the C types cannot hold (homa/_cint.py): every int argument of
homa.Socket, its pcap and encrypt dicts, the settings, and the calls that
take an id, cookie, offset, SPI, version or timeout raises
InvalidArgumentError naming the argument (not cffi's OverflowError), a
value of another type TypeError, and the ends of each C type the library
accepts still work. test_open_opts.py covers the newer open options."""
import asyncio
import math

import pytest

import homa
from conftest import LOCAL, PATIENT, Echo

U16, U32, U64, I32 = 1 << 16, 1 << 32, 1 << 64, 1 << 31
RT_MAX_BATCH = 1024   # HOMA_RT_MAX_BATCH (src/runtime/rt.h): the largest batch homa_open() takes

# homa.Socket keyword arguments with values their C fields cannot hold.
OPEN_UNREPRESENTABLE = [
    ("port", -1), ("port", 70000), ("port", U16),
    ("server", 2), ("server", -1), ("offload", 2), ("xdp_raw", -1),
    ("batch", -1), ("batch", U32),
    ("auto_fallback_ms", -1), ("auto_fallback_ms", U32),
    ("auto_retry_ms", -1), ("auto_retry_ms", U32),
    ("metrics_port", -1), ("metrics_port", U16),
    ("xdp_queues", -1), ("xdp_queues", U32),
]

PCAP_UNREPRESENTABLE = [
    ("max_bytes", -1), ("max_bytes", U64), ("keep_files", -1), ("keep_files", U32),
    ("sample_every", -1), ("sample_every", U32), ("snaplen", -1), ("snaplen", U32),
]

ENCRYPT_UNREPRESENTABLE = [
    ("version", I32), ("version", -I32 - 1), ("kx_port", -1), ("kx_port", U16),
    ("rotate_ns", -1), ("rotate_ns", U64), ("kx_timeout_ms", -1), ("kx_timeout_ms", U32),
]

# Integer arguments given another type: TypeError, as before the check.
WRONG_TYPE = [("port", 1.5), ("port", None), ("batch", "8"), ("server", None),
              ("metrics_port", 80.0), ("auto_retry_ms", "1")]


@pytest.mark.parametrize("name,value", OPEN_UNREPRESENTABLE)
def test_open_option_its_c_field_cannot_hold(name, value):
    with pytest.raises(homa.InvalidArgumentError, match=name):
        homa.Socket(bind_addr=LOCAL, **{name: value})


@pytest.mark.parametrize("name,value", PCAP_UNREPRESENTABLE)
def test_pcap_value_its_c_field_cannot_hold(tmp_path, name, value):
    with pytest.raises(homa.InvalidArgumentError, match=r"pcap\['%s'\]" % name):
        homa.Socket(bind_addr=LOCAL, pcap_path=str(tmp_path / "c.pcap"), pcap={name: value})


@pytest.mark.parametrize("name,value", ENCRYPT_UNREPRESENTABLE)
def test_encrypt_value_its_c_field_cannot_hold(name, value):
    with pytest.raises(homa.InvalidArgumentError, match=r"encrypt\['%s'\]" % name):
        homa.Socket(bind_addr=LOCAL, encrypt={name: value})


@pytest.mark.parametrize("name,value", WRONG_TYPE)
def test_open_option_of_another_type_is_a_type_error(name, value):
    with pytest.raises(TypeError):
        homa.Socket(bind_addr=LOCAL, **{name: value})


def test_unknown_pcap_option_is_an_invalid_argument(tmp_path):
    # like an unknown setting or encrypt option; it was cffi's AttributeError
    with pytest.raises(homa.InvalidArgumentError, match="unknown pcap option 'snap_len'"):
        homa.Socket(bind_addr=LOCAL, pcap_path=str(tmp_path / "c.pcap"), pcap={"snap_len": 128})


def test_pcap_and_encrypt_values_of_another_type_are_type_errors(tmp_path):
    with pytest.raises(TypeError):
        homa.Socket(bind_addr=LOCAL, pcap_path=str(tmp_path / "c.pcap"), pcap={"snaplen": 128.0})
    with pytest.raises(TypeError):
        homa.Socket(bind_addr=LOCAL, encrypt={"kx_port": "1"})


def test_aio_socket_checks_the_options_too():
    with pytest.raises(homa.InvalidArgumentError, match="port"):
        homa.aio.Socket(bind_addr=LOCAL, port=70000)


@pytest.mark.parametrize("send_timeout", [math.inf, math.nan, 1e10], ids=["inf", "nan", "1e10s"])
def test_send_timeout_int64_cannot_hold(send_timeout):
    """1e10 s is 1e19 ns, past int64_t's 9.2e18."""
    with pytest.raises(homa.InvalidArgumentError, match="send_timeout"):
        homa.Socket(bind_addr=LOCAL, send_timeout=send_timeout)


# -- the ends of each type that homa_open() accepts --------------------------

def _echo_pair(srv_kwargs, cli_kwargs):
    """An RPC between a server and a client opened with the arguments."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, **srv_kwargs) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT, **cli_kwargs) as cli:
        e = Echo(srv)
        assert bytes(cli.call(e.addr, b"ends", timeout=10)) == b"ends"


@pytest.mark.parametrize("kwargs", [
    {"batch": 1}, {"batch": RT_MAX_BATCH},
    {"transport": "auto", "auto_fallback_ms": 0, "auto_retry_ms": 0},
    {"transport": "auto", "auto_fallback_ms": U32 - 1, "auto_retry_ms": U32 - 1},
    {"xdp_queues": 0}, {"xdp_queues": U32 - 1},   # the UDP driver has no queues to pick
    {"offload": 0}, {"offload": 1}, {"xdp_raw": 0}, {"metrics_port": 0},
    {"send_timeout": 0}, {"send_timeout": 9e9},   # 9e18 ns: int64_t holds it
], ids=repr)
def test_open_option_ends_accepted(kwargs):
    _echo_pair(kwargs, kwargs)


@pytest.mark.parametrize("name", ["port", "metrics_port"])
def test_port_65535_accepted(name):
    """The largest port: the socket opens (unless another process holds it)."""
    try:
        with homa.Socket(bind_addr=LOCAL, metrics_addr=LOCAL, **{name: U16 - 1}) as s:
            if name == "port":
                assert s.port == U16 - 1
    except homa.AddressInUseError:
        pytest.skip("port 65535 in use")


@pytest.mark.parametrize("pcap", [
    {"max_bytes": 0, "keep_files": 0, "sample_every": 0, "snaplen": 0},
    {"max_bytes": U64 - 1, "keep_files": 1000, "sample_every": U32 - 1, "snaplen": 262144},
], ids=["zeros", "largest"])
def test_pcap_ends_accepted(tmp_path, pcap):
    _echo_pair({}, {"pcap_path": str(tmp_path / "c.pcap"), "pcap": pcap})


@pytest.mark.parametrize("enc", [
    {"version": 0, "kx_port": 0, "rotate_ns": 0, "kx_timeout_ms": 0},
    # rotate_ns: 2**63, not UINT64_MAX: homa_open() takes that too, but the
    # next rotation time (now + rotate_ns) wraps and the keys rotate at every tick.
    {"version": 3, "kx_port": U16 - 1, "rotate_ns": 1 << 63, "kx_timeout_ms": U32 - 1},
], ids=["zeros", "largest"])
def test_encrypt_ends_accepted(enc):
    with homa.Socket(bind_addr=LOCAL, encrypt=enc) as s:
        assert s.encrypt_stats()["sealed"] == 0


# -- settings ------------------------------------------------------------------

@pytest.mark.parametrize("fields,label", [
    ({"timeout_ticks": -1}, "timeout_ticks"), ({"timeout_ticks": U32}, "timeout_ticks"),
    ({"max_message": U64}, "max_message"), ({"dynamic_cutoffs": 2}, "dynamic_cutoffs"),
    ({"unsched_cutoffs": [-1] + [0] * 7}, r"unsched_cutoffs\[0\]"),
    ({"unsched_cutoffs": [0] * 7 + [U32]}, r"unsched_cutoffs\[7\]"),
], ids=repr)
def test_setting_its_c_field_cannot_hold(client, fields, label):
    with pytest.raises(homa.InvalidArgumentError, match=label):
        client.set_settings(**fields)
    with pytest.raises(homa.InvalidArgumentError, match=label):
        homa.Socket(bind_addr=LOCAL, settings=fields)


def test_setting_of_another_type_is_a_type_error(client):
    with pytest.raises(TypeError):
        client.set_settings(timeout_ticks=1.5)
    with pytest.raises(TypeError):
        client.set_settings(unsched_cutoffs=[0.5] * 8)
    with pytest.raises(TypeError):
        client.set_settings(unsched_cutoffs=0)   # an array field


def test_setting_largest_accepted(client):
    client.set_settings(timeout_ticks=U32 - 1, max_rpcs=U32 - 1)
    client.set_settings(timeout_ticks=PATIENT["timeout_ticks"])


# -- calls ---------------------------------------------------------------------

@pytest.mark.parametrize("cookie", [-1, U64])
@pytest.mark.parametrize("more", [False, True])
def test_cookie_uint64_cannot_hold(client, server, cookie, more):
    with pytest.raises(homa.InvalidArgumentError, match="cookie"):
        client.send_request((LOCAL, server.port), b"x", cookie=cookie, more=more)


@pytest.mark.parametrize("cookie", [0, U64 - 1])
def test_cookie_ends_come_back(client, echo, cookie):
    rpc = client.send_request(echo.addr, b"c", cookie=cookie)
    with client.recv_response(rpc, timeout=10) as m:
        assert m.cookie == cookie


@pytest.mark.parametrize("rpc", [-1, U64])
def test_rpc_id_uint64_cannot_hold(client, server, rpc):
    for call in (lambda: client.recv_response(rpc, timeout=0), lambda: client.abort(rpc),
                 lambda: client.recv_partial(rpc, 0, bytearray(8)),
                 lambda: server.reply(rpc, b"x"), lambda: server.reply(rpc, b"x", more=True)):
        with pytest.raises(homa.InvalidArgumentError, match="id"):
            call()


def test_rpc_id_ends_accepted(client):
    """0 and UINT64_MAX reach the C library, which finds no such RPC."""
    with pytest.raises(homa.WouldBlockError):
        client.recv_response(0, timeout=0)
    with pytest.raises(homa.NotFoundError):
        client.recv_response(U64 - 1, timeout=0)
    with pytest.raises(homa.NotFoundError):
        client.abort(U64 - 1)
    with pytest.raises(homa.NotFoundError):
        client.recv_partial(U64 - 1, U64 - 1, bytearray(8))


def test_offset_size_t_cannot_hold(client, echo):
    with pytest.raises(homa.InvalidArgumentError, match="offset"):
        client.recv_partial(2, -1, bytearray(8))
    rpc = client.send_request(echo.addr, b"abc")
    with client.recv_response(rpc, timeout=10) as m:
        with pytest.raises(homa.InvalidArgumentError, match="offset"):
            m.copy_into(bytearray(8), -1)
        with pytest.raises(homa.InvalidArgumentError, match="offset"):
            m.copy_into(bytearray(8), U64)
        assert m.copy_into(bytearray(8), 0) == 3
        assert m.copy_into(bytearray(8), U64 - 1) == 0


@pytest.mark.parametrize("timeout", [math.inf, math.nan, 1e10], ids=["inf", "nan", "1e10s"])
def test_timeout_int64_cannot_hold(client, echo, timeout):
    """recv_response(), poll() and call() (before it sends) reject it."""
    with pytest.raises(homa.InvalidArgumentError, match="timeout"):
        client.recv_response(0, timeout=timeout)
    with homa.Socket(bind_addr=LOCAL, mode="polled") as polled:
        with pytest.raises(homa.InvalidArgumentError, match="timeout"):
            polled.poll(timeout)
    with pytest.raises(homa.InvalidArgumentError, match="timeout"):
        client.call(echo.addr, b"x", timeout=timeout)
    assert client.stats()["client_rpcs_started"] == 0   # call() sent nothing


def test_encrypt_spi_and_version_c_types_cannot_hold():
    with homa.Socket(bind_addr=LOCAL, encrypt=True) as s:
        key = bytes(16)
        for spi in (-1, U32):
            with pytest.raises(homa.InvalidArgumentError, match="spi"):
                s.encrypt_tx_add((LOCAL, 4000), spi, key)
        for version in (I32, -I32 - 1):
            with pytest.raises(homa.InvalidArgumentError, match="version"):
                s.encrypt_tx_add((LOCAL, 4000), 1, key, version)
            with pytest.raises(homa.InvalidArgumentError, match="version"):
                s.encrypt_rx_issue(version)
        s.encrypt_tx_add((LOCAL, 4000), U32 - 1, key)   # the largest SPI fits
        s.encrypt_tx_add((LOCAL, 4001), 0, key)


def test_aio_recv_response_id_uint64_cannot_hold():
    async def main():
        with homa.aio.Socket(bind_addr=LOCAL) as s:
            with pytest.raises(homa.InvalidArgumentError, match="id"):
                await s.recv_response(-1, timeout=1)
            with pytest.raises(homa.NotFoundError):
                await s.recv_response(U64 - 1, timeout=1)
    asyncio.run(main())
