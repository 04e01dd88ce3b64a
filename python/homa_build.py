# SPDX-License-Identifier: MIT
"""Builds homa._homa_cffi, the cffi (API mode) extension over libhoma.

The extension is compiled against the real headers, so every structure's
layout comes from the C compiler: the declarations below name only the
fields Python uses and end in "...;". The counter and settings structures
are read field by field from the headers themselves, so new fields appear
in Python without an edit here.

Where the library is found, first match wins:
  HOMA_INCLUDE_DIR and HOMA_LIB_DIR   explicit directories
  HOMA_PREFIX                          an installed prefix (make install)
  the source tree around this folder   include/ and build/package/ (after `make`;
                                       HOMA_BUILD_DIR names another build directory)
  pkg-config homa                      the installed library
The extension records the library's directory as its run-time path.
"""
import os
import re
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)


def _lib_dir_of(prefix):
    """The directory under @prefix that holds libhoma.so, or None."""
    for sub in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
        d = os.path.join(prefix, sub)
        if os.path.exists(os.path.join(d, "libhoma.so")):
            return d
    return None


def find_library():
    """Return (include_dir, lib_dir) of libhoma, or raise RuntimeError."""
    inc, lib = os.environ.get("HOMA_INCLUDE_DIR"), os.environ.get("HOMA_LIB_DIR")
    if inc and lib:
        return inc, lib
    prefix = os.environ.get("HOMA_PREFIX")
    if prefix:
        lib = _lib_dir_of(prefix)
        if not lib:
            raise RuntimeError("HOMA_PREFIX=%s has no lib*/libhoma.so" % prefix)
        return os.path.join(prefix, "include"), lib
    build = os.environ.get("HOMA_BUILD_DIR", os.path.join(TREE, "build"))
    for lib in (os.path.join(build, "package"), build):
        if (os.path.exists(os.path.join(TREE, "include", "homa", "homa.h"))
                and os.path.exists(os.path.join(lib, "libhoma.so"))):
            return os.path.join(TREE, "include"), lib
    try:
        inc = subprocess.check_output(["pkg-config", "--variable=includedir", "homa"], text=True).strip()
        lib = subprocess.check_output(["pkg-config", "--variable=libdir", "homa"], text=True).strip()
        return inc, lib
    except (OSError, subprocess.CalledProcessError):
        pass
    raise RuntimeError("libhoma not found: run `make` in the source tree, install it "
                       "(pkg-config homa), or set HOMA_PREFIX or HOMA_BUILD_DIR")


_FIELD = re.compile(r"^\s*(?:const\s+)?(u?int(?:8|16|32|64)_t|bool|int|size_t)\s+(\w+)\s*(\[[^\]]*\])?\s*;")


def struct_fields(header, name):
    """The scalar and array fields of `struct name` in @header as cdef lines
    (arrays sized by the compiler: "[...]")."""
    with open(header) as f:
        text = f.read()
    m = re.search(r"^struct %s \{\n(.*?)^\};" % name, text, re.S | re.M)
    if not m:
        raise RuntimeError("struct %s not found in %s" % (name, header))
    out = []
    for line in m.group(1).splitlines():
        f = _FIELD.match(line)
        if f:
            out.append("    %s %s%s;" % (f.group(1), f.group(2), "[...]" if f.group(3) else ""))
    return "\n".join(out)


CDEF = r"""
typedef int... socklen_t;
struct sockaddr { ...; };
struct sockaddr_storage { unsigned short ss_family; ...; };
#define HOMA_RECV_REQUEST ...
#define HOMA_RECV_RESPONSE ...
#define HOMA_OPEN_OPTS_VERSION ...
#define HOMA_SEND_MORE ...
#define HOMA_KNOWN_PEERS_DEFAULT ...
#define HOMA_KNOWN_PEERS_MAX ...
#define HOMA_STRANGER_BUDGET_DEFAULT ...
#define HOMA_STRANGER_BUDGET_MAX ...
#define HOMA_STRANGER_CPU_DEFAULT ...
#define HOMA_STRANGER_CPU_MAX ...
#define HOMA_SPIN_US_DEFAULT ...
#define HOMA_SPIN_US_MAX ...
#define HOMA_RX_LEND_SLOTS_DEFAULT ...
#define HOMA_RX_LEND_SLOTS_MAX ...
enum homa_driver_kind { HOMA_DRIVER_UDP, HOMA_DRIVER_RAW, HOMA_DRIVER_XDP, ... };
enum homa_mode { HOMA_MODE_THREADED, HOMA_MODE_POLLED, ... };
enum homa_transport { HOMA_TRANSPORT_HOMA, HOMA_TRANSPORT_TCP, HOMA_TRANSPORT_AUTO, ... };
typedef struct homa_socket homa_socket;
struct homa_iov { const void *base; size_t len; };
struct homa_settings {
%(settings)s
    ...;
};
struct homa_stats {
%(stats)s
    ...;
};
struct homa_io_stats {
%(io_stats)s
    ...;
};
struct homa_psp_stats {
%(psp_stats)s
    ...;
};
struct homa_pcap_opts { uint64_t max_bytes; uint32_t keep_files; uint32_t sample_every; uint32_t snaplen; ...; };
struct homa_encrypt_opts {
    int version; const uint8_t *master_keys; const char *cert_file;
    const char *key_file; const char *ca_file; uint16_t kx_port;
    uint64_t rotate_ns; uint32_t kx_timeout_ms; ...;
};
struct homa_open_opts {
    uint32_t version; int driver; int mode; const char *bind_addr;
    uint16_t port; bool server; const struct homa_settings *settings;
    int64_t send_timeout_ns; uint32_t batch; bool offload;
    const char *pcap_path; struct homa_pcap_opts pcap; uint16_t metrics_port;
    const char *metrics_addr; const struct homa_encrypt_opts *encrypt;
    const char *ifname; uint32_t xdp_queues; bool xdp_raw;
    int transport; uint32_t auto_fallback_ms; uint32_t auto_retry_ms;
    uint64_t auto_tcp_min_bytes; uint32_t rcvbuf_bytes; int32_t known_peers;
    int32_t stranger_budget; int32_t stranger_cpu_us; uint32_t spin_us; int32_t rx_lend_slots; ...;
};
struct homa_message {
    uint64_t id; uint64_t cookie; int type; int error;
    struct sockaddr_storage peer; socklen_t peer_len; size_t length;
    uint64_t rtt_ns; ...;
};

const char *homa_strerror(int err);
void homa_settings_default(struct homa_settings *s);
int homa_settings_validate(const struct homa_settings *s, const char **why);
void homa_open_opts_default(struct homa_open_opts *o);
int homa_open(homa_socket **out, const struct homa_open_opts *opts);
int homa_close(homa_socket *s);
int homa_local_port(homa_socket *s);
int homa_send_request(homa_socket *s, const struct sockaddr *dst, const struct homa_iov *iov,
                      int iovcnt, uint64_t cookie, uint64_t *id);
int homa_send(homa_socket *s, const struct sockaddr *dst, const void *buf, size_t len,
              uint64_t cookie, uint64_t *id);
int homa_recv(homa_socket *s, int flags, uint64_t id, int64_t timeout_ns, struct homa_message *out);
size_t homa_message_segment(const struct homa_message *m, size_t offset, const void **ptr);
size_t homa_message_copy(const struct homa_message *m, size_t offset, void *dst, size_t len);
int homa_message_release(struct homa_message *m);
int64_t homa_recv_partial(homa_socket *s, uint64_t id, size_t offset, void *buf, size_t cap,
                          size_t *available);
int homa_reply(homa_socket *s, uint64_t id, const struct homa_iov *iov, int iovcnt);
struct homa_send_opts { uint32_t size; int64_t timeout_ns; uint64_t cookie; uint32_t flags; ...; };
void homa_send_opts_default(struct homa_send_opts *o);
int homa_request_opts(homa_socket *s, const struct sockaddr *dst, const struct homa_iov *iov,
                      int iovcnt, const struct homa_send_opts *o, uint64_t *id);
int homa_reply_opts(homa_socket *s, uint64_t id, const struct homa_iov *iov, int iovcnt,
                    const struct homa_send_opts *o);
int homa_reply_buf(homa_socket *s, uint64_t id, const void *buf, size_t len);
int homa_abort(homa_socket *s, uint64_t id);
int homa_fd(homa_socket *s);
int homa_poll(homa_socket *s, int64_t timeout_ns);
int homa_set_settings(homa_socket *s, const struct homa_settings *st);
int homa_socket_stats(homa_socket *s, struct homa_stats *out);
int homa_io_stats(homa_socket *s, struct homa_io_stats *out);
int homa_sockaddr_parse(const char *host, uint16_t port, struct sockaddr_storage *out,
                        socklen_t *len);
const char *homa_drop_reason_name(int reason);

void homa_encrypt_opts_default(struct homa_encrypt_opts *e);
int homa_encrypt_tx_add(homa_socket *s, const struct sockaddr *dst, uint32_t spi,
                        const uint8_t *key, int version);
int homa_encrypt_tx_remove(homa_socket *s, const struct sockaddr *dst);
int homa_encrypt_rx_issue(homa_socket *s, uint32_t *spi, uint8_t *key);
int homa_encrypt_rotate(homa_socket *s, const uint8_t *key);
int homa_encrypt_connect(homa_socket *s, const struct sockaddr *dst);
int homa_encrypt_stats(homa_socket *s, struct homa_psp_stats *out);
size_t homa_psp_key_len(int version);

/* helpers of the binding (homa_build.py) */
int pyhoma_peer(const struct sockaddr_storage *ss, char *host, size_t cap);
int pyhoma_error(int i, const char **name);
"""

# Small C helpers compiled into the extension: the peer address as text
# and port, and the list of error codes (read from the header's enum).
HELPERS = r"""
#include <arpa/inet.h>
#include <netinet/in.h>
#include <homa/homa.h>
#include <homa/encrypt.h>

/* pyhoma_peer(): write @ss's address as text into @host; return its port,
 * or -1 for a family other than IPv4 and IPv6. */
static int pyhoma_peer(const struct sockaddr_storage *ss, char *host, size_t cap)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;
		inet_ntop(AF_INET, &in->sin_addr, host, (socklen_t)cap);
		return ntohs(in->sin_port);
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, (socklen_t)cap);
		return ntohs(in6->sin6_port);
	}
	return -1;
}

static const struct { int code; const char *name; } pyhoma_codes[] = { %(codes)s };

/* pyhoma_error(): the @i-th HOMA_E* code of errors.h, its name in *@name;
 * 0 past the last one. */
static int pyhoma_error(int i, const char **name)
{
	if (i < 0 || i >= (int)(sizeof(pyhoma_codes) / sizeof(pyhoma_codes[0])))
		return 0;
	*name = pyhoma_codes[i].name;
	return pyhoma_codes[i].code;
}
"""


def error_codes(header):
    """Every HOMA_E* name of enum homa_error in @header, in order."""
    with open(header) as f:
        return re.findall(r"^\s*(HOMA_E[A-Z0-9_]+)\s*=", f.read(), re.M)


def make_builder():
    """The FFI builder for homa._homa_cffi."""
    inc, lib = find_library()
    h = lambda name: os.path.join(inc, "homa", name)
    cdef = CDEF % {
        "settings": struct_fields(h("settings.h"), "homa_settings"),
        "stats": struct_fields(h("stats.h"), "homa_stats"),
        "io_stats": struct_fields(h("homa.h"), "homa_io_stats"),
        "psp_stats": struct_fields(h("psp.h"), "homa_psp_stats"),
    }
    ffi = FFI()
    ffi.cdef(cdef)
    ffi.set_source("homa._homa_cffi",
                   HELPERS % {"codes": ", ".join('{%s, "%s"}' % (c, c)
                                                for c in error_codes(h("errors.h")))},
                   include_dirs=[inc], library_dirs=[lib], libraries=["homa"],
                   runtime_library_dirs=[lib],
                   extra_compile_args=shlex.split(os.environ.get("HOMA_CFLAGS", "")))
    return ffi


ffibuilder = make_builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
