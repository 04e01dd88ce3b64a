/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_floor.c
 * homa-xdp-floor: the least a packet can cost between two hosts of a veth
 * pair, without any protocol, so that the XDP driver's and the UDP
 * driver's figures (scripts/bench-xdp.sh) can be read against what the
 * kernel path under them costs by itself. One process sends, another
 * receives, for a given time; each prints what it moved and the CPU it
 * spent (getrusage). Usage: homa-xdp-floor [-s PAYLOAD] [-c CHUNK] MODE
 * ARGS, where PAYLOAD is the UDP payload bytes per packet (1472 by
 * default: a 1500-byte MTU) and CHUNK the UMEM frame size of the xsk
 * modes (4096 by default; a larger one needs a kernel that accepts it
 * and hugepages). Modes:
 *
 *   xsk-tx IF SECS SRC_MAC DST_MAC SRC_IP DST_IP  AF_XDP copy mode: the
 *       same prebuilt frame (IPv4/UDP, PAYLOAD bytes) from a ring of
 *       frames, 64 packets per batch, a sendto() kick when the kernel
 *       asks for one (XDP_USE_NEED_WAKEUP). Above 1472 bytes of payload,
 *       multi-buffer (XDP_USE_SG) and no program on the sending side: a
 *       packet longer than a frame is sent as a chain of descriptors, each
 *       but the last with XDP_PKT_CONTD.
 *   xsk-rx IF SECS  AF_XDP copy mode on queue 0 (libxdp's default
 *       program redirects every packet to the socket): frames are taken
 *       64 at a time and given back to the fill ring untouched; the
 *       process sleeps in poll() when the ring is empty. With a PAYLOAD
 *       above 1472 bytes, the socket binds with XDP_USE_SG and the
 *       program is loaded with frags support (BPF_F_XDP_HAS_FRAGS), which
 *       veth requires above an MTU of 3506; a packet that does not fit a
 *       frame arrives as a chain of descriptors and is counted at the one
 *       that ends it.
 *   udp-tx IF SECS DST_IP [gso]  sendmmsg() of 64 datagrams of PAYLOAD
 *       bytes to port 5001; with "gso", of 64 UDP_SEGMENT datagrams of as
 *       many segments as fit in 64 KB (the UDP driver's default batching).
 *   udp-rx IF SECS [gso]  recvmmsg() of up to 64 datagrams on port 5001,
 *       sleeping in the call; with "gso", UDP_GRO on and each returned
 *       datagram counted as the segments it carries.
 *
 * Output: one line "MODE packets N pps P user_us U sys_us S
 * user_us_per_pkt u sys_us_per_pkt s" (plus "kicks K" for xsk-tx).
 * Exit status: 0; 1 when a socket cannot be set up (the reason on
 * stderr); 2 for bad arguments. Needs CAP_NET_RAW and CAP_BPF (root) for
 * the xsk modes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

/** Frames in the UMEM (half for the fill ring, half for sending). */
#define NFRAMES 4096
/** Packets or datagrams per batch. */
#define BATCH 64
/** Ring sizes (fill, completion, rx, tx). */
#define RING 2048
/** Largest UDP payload of an IPv4 packet. */
#define MAX_PAYLOAD 65507
/** UDP port of the udp modes. */
#define PORT 5001
/** Ethernet + IPv4 + UDP header bytes. */
#define HDRS 42
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)  /* bind flag (Linux 6.6 uapi; older headers lack it) */
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)  /* descriptor option: the packet goes on */
#endif

/** UDP payload bytes per packet (-s). */
static unsigned int payload = 1472;
/** Bytes per UMEM frame (-c). */
static unsigned int frame = 4096;

/** gso_segs() - Segments per UDP_SEGMENT datagram: as many as fit in 64 KB. */
static unsigned int gso_segs(void)
{
	return MAX_PAYLOAD / payload;
}

/**
 * multibuf() - Whether the xsk modes run multi-buffer: for any payload
 * above 1472 bytes, since it needs a veth MTU above 1500 and veth refuses
 * a program without frags support above an MTU of 3506; a packet then
 * takes as many frames as it needs.
 */
static int multibuf(void)
{
	return payload > 1472;
}

/** An AF_XDP socket with its UMEM and rings. */
struct xsk {
	struct xsk_socket *sock;
	struct xsk_umem *umem;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	uint8_t *area;
};

/** now_s() - CLOCK_MONOTONIC in seconds. */
static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/** report() - Print @mode's packet count @n over @secs and this process's CPU. */
static void report(const char *mode, unsigned long n, double secs)
{
	struct rusage r;
	double u, s;

	getrusage(RUSAGE_SELF, &r);
	u = (double)r.ru_utime.tv_sec * 1e6 + (double)r.ru_utime.tv_usec;
	s = (double)r.ru_stime.tv_sec * 1e6 + (double)r.ru_stime.tv_usec;
	printf("%s packets %lu pps %.0f user_us %.0f sys_us %.0f user_us_per_pkt %.3f "
	       "sys_us_per_pkt %.3f\n", mode, n, (double)n / secs, u, s,
	       n ? u / (double)n : 0.0, n ? s / (double)n : 0.0);
}

/**
 * frags_prog() - Attach libxdp's default AF_XDP program to @ifname in
 * native mode, loaded with frags support, and point @x's socket at it.
 * The program stays attached until the socket is closed (process exit).
 * Return: 0, or -1 with the reason on stderr.
 */
static int frags_prog(struct xsk *x, const char *ifname)
{
	struct xdp_program *p = xdp_program__find_file("xsk_def_xdp_prog.o", "xdp", NULL);
	int err = (int)libxdp_get_error(p);
	struct bpf_map *m;

	if (!err)
		err = xdp_program__set_xdp_frags_support(p, true);
	if (!err)
		err = xdp_program__attach(p, (int)if_nametoindex(ifname), XDP_MODE_NATIVE, 0);
	m = err ? NULL : bpf_object__find_map_by_name(xdp_program__bpf_obj(p), "xsks_map");
	if (!err && !m)
		err = -ENOENT;
	if (!err)
		err = xsk_socket__update_xskmap(x->sock, bpf_map__fd(m));
	if (err)
		fprintf(stderr, "xdp-floor: frags program on %s: %s\n", ifname, strerror(-err));
	return err ? -1 : 0;
}

/**
 * xsk_open() - Open an AF_XDP socket in copy mode on queue 0 of @ifname
 * with a UMEM of NFRAMES frames (hugepages when a frame exceeds a page);
 * the first RING frames go to the fill ring when @want_rx. Multi-buffer
 * (XDP_USE_SG) when a packet does not fit a frame; then the receiver
 * loads the program itself, with frags support. The caller keeps @x for
 * the life of the process. Return: 0, or -1 with the reason on stderr.
 */
static int xsk_open(struct xsk *x, const char *ifname, int want_rx, int want_tx)
{
	struct xsk_umem_config uc = {.fill_size = RING, .comp_size = RING,
				     .frame_size = frame, .frame_headroom = 0};
	struct xsk_socket_config sc = {.rx_size = RING, .tx_size = RING,
				       .xdp_flags = XDP_FLAGS_DRV_MODE,
				       .bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY};
	size_t len = (size_t)NFRAMES * frame;
	uint32_t idx = 0, n;
	int err;

	if (multibuf()) {
		sc.bind_flags |= XDP_USE_SG;
		sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
	}
	x->area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (frame > 4096 ? MAP_HUGETLB : 0), -1, 0);
	if (x->area == MAP_FAILED) {
		perror("xdp-floor: mmap");
		return -1;
	}
	err = xsk_umem__create(&x->umem, x->area, len, &x->fill, &x->comp, &uc);
	if (err) {
		fprintf(stderr, "xdp-floor: UMEM of %u-byte frames: %s\n", frame, strerror(-err));
		return -1;
	}
	/* The queue of a socket that just closed is released asynchronously. */
	for (int tries = 0; tries < 20; tries++) {
		err = xsk_socket__create(&x->sock, ifname, 0, x->umem, want_rx ? &x->rx : NULL,
					 want_tx ? &x->tx : NULL, &sc);
		if (err != -EBUSY)
			break;
		usleep(100000);
	}
	if (err) {
		fprintf(stderr, "xdp-floor: AF_XDP socket on %s: %s\n", ifname, strerror(-err));
		return -1;
	}
	if (want_rx && multibuf() && frags_prog(x, ifname))
		return -1;
	n = want_rx ? xsk_ring_prod__reserve(&x->fill, RING, &idx) : 0;
	for (uint32_t i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) = (uint64_t)i * frame;
	xsk_ring_prod__submit(&x->fill, n);
	return 0;
}

/**
 * xsk_rx_batch() - Take up to BATCH descriptors from @x's rx ring and give
 * their frames back to the fill ring. Return: packets ended (descriptors
 * without XDP_PKT_CONTD).
 */
static uint32_t xsk_rx_batch(struct xsk *x)
{
	uint32_t idx, fidx = 0, ends = 0, got = xsk_ring_cons__peek(&x->rx, BATCH, &idx);

	if (!got)
		return 0;
	if (xsk_ring_prod__reserve(&x->fill, got, &fidx) != got)
		return 0;  /* cannot happen: every frame taken is given back */
	for (uint32_t i = 0; i < got; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);

		*xsk_ring_prod__fill_addr(&x->fill, fidx + i) = d->addr - d->addr % frame;
		ends += !(d->options & XDP_PKT_CONTD);
	}
	xsk_ring_prod__submit(&x->fill, got);
	xsk_ring_cons__release(&x->rx, got);
	return ends;
}

/** xsk_rx() - Mode xsk-rx: receive on @ifname for @secs. Return: exit status. */
static int xsk_rx(const char *ifname, double secs)
{
	static struct xsk x;
	unsigned long n = 0;
	double end = now_s() + secs;

	if (xsk_open(&x, ifname, 1, 0))
		return 1;
	while (now_s() < end) {
		uint32_t got = xsk_rx_batch(&x);
		struct pollfd p = {.fd = xsk_socket__fd(x.sock), .events = POLLIN};

		n += got;
		if (got)
			continue;
		if (xsk_ring_prod__needs_wakeup(&x.fill))
			recvfrom(p.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		poll(&p, 1, 100);
	}
	report("xsk-rx", n, secs);
	return 0;
}

/** sum16() - RFC 1071 checksum of @len bytes at @p (for the IPv4 header). */
static uint16_t sum16(const uint8_t *p, int len)
{
	uint32_t s = 0;

	for (int i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/**
 * build_frame() - Write the Ethernet/IPv4/UDP headers of a packet of
 * payload bytes (UDP checksum 0: none) into @f (HDRS bytes).
 * Return: 0, or -1 when a MAC or IP argument does not parse.
 */
static int build_frame(uint8_t *f, const char *smac, const char *dmac, const char *sip,
		       const char *dip)
{
	uint8_t *ip = f + 14, *udp = ip + 20;
	uint16_t c;

	memset(f, 0, HDRS);
	if (sscanf(dmac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", f, f + 1, f + 2, f + 3, f + 4, f + 5) != 6 ||
	    sscanf(smac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", f + 6, f + 7, f + 8, f + 9, f + 10,
		   f + 11) != 6 ||
	    inet_pton(AF_INET, sip, ip + 12) != 1 || inet_pton(AF_INET, dip, ip + 16) != 1)
		return -1;
	f[12] = 0x08;  /* IPv4 */
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + 8 + payload) >> 8);
	ip[3] = (uint8_t)((20 + 8 + payload) & 0xff);
	ip[6] = 0x40;  /* don't fragment */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	c = sum16(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	udp[0] = udp[2] = PORT >> 8;
	udp[1] = udp[3] = PORT & 0xff;
	udp[4] = (uint8_t)((8 + payload) >> 8);
	udp[5] = (uint8_t)((8 + payload) & 0xff);
	return 0;
}

/** Frames free for sending: UMEM addresses. */
struct freelist {
	uint64_t addr[RING];
	uint32_t n;
};

/**
 * xsk_tx_batch() - Reclaim completed frames of @x into @fl, then queue up
 * to BATCH packets of @len bytes from it, each as a chain of descriptors
 * of at most one frame (every frame of @fl holds the headers, so any
 * frame can start a packet). Return: packets queued.
 */
static uint32_t xsk_tx_batch(struct xsk *x, struct freelist *fl, uint32_t len)
{
	uint32_t idx, got = xsk_ring_cons__peek(&x->comp, RING, &idx);
	uint32_t per = (len + frame - 1) / frame, want;

	for (uint32_t i = 0; i < got; i++)
		fl->addr[fl->n++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	xsk_ring_cons__release(&x->comp, got);
	want = fl->n / per < BATCH ? fl->n / per : BATCH;
	if (!want || xsk_ring_prod__reserve(&x->tx, want * per, &idx) != want * per)
		return 0;
	for (uint32_t i = 0; i < want * per; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
		uint32_t off = i % per * frame;

		d->addr = fl->addr[--fl->n];
		d->len = len - off < frame ? len - off : frame;
		d->options = i % per == per - 1 ? 0 : XDP_PKT_CONTD;
	}
	xsk_ring_prod__submit(&x->tx, want * per);
	return want;
}

/** xsk_tx() - Mode xsk-tx (argv as the file comment says). Return: exit status. */
static int xsk_tx(char **argv, double secs)
{
	static struct xsk x;
	static struct freelist fl;
	uint8_t f[HDRS];
	unsigned long n = 0, kicks = 0;
	double end = now_s() + secs;

	if (build_frame(f, argv[4], argv[5], argv[6], argv[7])) {
		fprintf(stderr, "xdp-floor: bad MAC or IPv4 address\n");
		return 2;
	}
	if (xsk_open(&x, argv[2], 0, 1))
		return 1;
	for (fl.n = 0; fl.n < RING; fl.n++) {
		fl.addr[fl.n] = (uint64_t)(RING + fl.n) * frame;
		memcpy(x.area + fl.addr[fl.n], f, sizeof(f));
	}
	while (now_s() < end) {
		n += xsk_tx_batch(&x, &fl, HDRS + payload);
		if (xsk_ring_prod__needs_wakeup(&x.tx)) {
			kicks++;
			sendto(xsk_socket__fd(x.sock), NULL, 0, MSG_DONTWAIT, NULL, 0);
		}
	}
	report("xsk-tx", n, secs);
	printf("kicks %lu\n", kicks);
	return 0;
}

/** The udp modes' buffers: BATCH headers, each over one datagram's buffer. */
struct udp_bufs {
	uint8_t *data;
	struct iovec iov[BATCH];
	struct mmsghdr m[BATCH];
	char ctl[BATCH][CMSG_SPACE(sizeof(int))];
};

/**
 * udp_bufs_init() - Point @b's headers at buffers of @len bytes each,
 * with room for a UDP_GRO control message when @gso. @b owns the buffers
 * until the process ends. Return: 0, or -1 (no memory).
 */
static int udp_bufs_init(struct udp_bufs *b, size_t len, int gso)
{
	memset(b, 0, sizeof(*b));
	b->data = calloc(BATCH, len);
	if (!b->data)
		return -1;
	for (int i = 0; i < BATCH; i++) {
		b->iov[i].iov_base = b->data + (size_t)i * len;
		b->iov[i].iov_len = len;
		b->m[i].msg_hdr.msg_iov = &b->iov[i];
		b->m[i].msg_hdr.msg_iovlen = 1;
		b->m[i].msg_hdr.msg_control = gso ? b->ctl[i] : NULL;
		b->m[i].msg_hdr.msg_controllen = gso ? sizeof(b->ctl[i]) : 0;
	}
	return 0;
}

/** gro_segments() - Segments datagram @h carried (its UDP_GRO size; 1 without one). */
static unsigned long gro_segments(const struct mmsghdr *h)
{
	const struct msghdr *m = &h->msg_hdr;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		int size;

		if (c->cmsg_level != IPPROTO_UDP || c->cmsg_type != UDP_GRO)
			continue;
		memcpy(&size, CMSG_DATA(c), sizeof(size));
		return size > 0 ? (h->msg_len + (unsigned)size - 1) / (unsigned)size : 1;
	}
	return 1;
}

/** udp_rx() - Mode udp-rx: receive on port PORT for @secs (with @gso: UDP_GRO). Return: exit status. */
static int udp_rx(double secs, int gso)
{
	static struct udp_bufs b;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	struct timeval tv = {0, 100000};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), sz = 8 << 20, one = 1;
	unsigned long n = 0;
	double end = now_s() + secs;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (gso && setsockopt(fd, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))) {
		perror("xdp-floor: udp-rx socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (udp_bufs_init(&b, gso ? 65536 : payload, gso)) {
		fprintf(stderr, "xdp-floor: no memory\n");
		return 1;
	}
	while (now_s() < end) {
		int r = recvmmsg(fd, b.m, BATCH, 0, NULL);

		for (int i = 0; i < r; i++) {
			n += gso ? gro_segments(&b.m[i]) : 1;
			b.m[i].msg_hdr.msg_controllen = gso ? sizeof(b.ctl[i]) : 0;
		}
	}
	report(gso ? "udp-gro-rx" : "udp-rx", n, secs);
	close(fd);
	return 0;
}

/** udp_tx() - Mode udp-tx: send to @dst port PORT for @secs (with @gso: UDP_SEGMENT). Return: exit status. */
static int udp_tx(const char *dst, double secs, int gso)
{
	static struct udp_bufs b;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(PORT)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), seg = (int)payload;
	unsigned long n = 0;
	double end = now_s() + secs;

	if (fd < 0 || inet_pton(AF_INET, dst, &a.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    (gso && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg)))) {
		perror("xdp-floor: udp-tx socket");
		return 1;
	}
	if (udp_bufs_init(&b, gso ? (size_t)gso_segs() * payload : payload, 0)) {
		fprintf(stderr, "xdp-floor: no memory\n");
		return 1;
	}
	while (now_s() < end) {
		int r = sendmmsg(fd, b.m, BATCH, 0);

		if (r > 0)
			n += (unsigned long)r * (gso ? gso_segs() : 1);
	}
	report(gso ? "udp-gso-tx" : "udp-tx", n, secs);
	close(fd);
	return 0;
}

/** quiet() - libbpf's and libxdp's log callback: their notes (no bpffs, no dispatcher) are not this tool's output. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/** quiet_xdp() - The same for libxdp's log. */
static int quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/** usage() - Print the modes. Return: 2. */
static int usage(void)
{
	fprintf(stderr, "usage: homa-xdp-floor [-s PAYLOAD] [-c CHUNK] MODE ARGS, MODE ARGS one of\n"
			"       xsk-tx IF SECS SRC_MAC DST_MAC SRC_IP DST_IP\n"
			"       xsk-rx IF SECS\n"
			"       udp-tx IF SECS DST_IP [gso]\n"
			"       udp-rx IF SECS [gso]\n");
	return 2;
}

/**
 * options() - Parse -s and -c from @argc/@argv into payload and frame.
 * Return: the index of the mode's argument, or -1 when an option is bad
 * (a payload of 1 to 65507 bytes, a frame a power of two from 2048).
 */
static int options(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "+s:c:")) != -1) {
		long v = strtol(optarg ? optarg : "", NULL, 10);

		if (c == 's' && v >= 1 && v <= MAX_PAYLOAD)
			payload = (unsigned int)v;
		else if (c == 'c' && v >= 2048 && v <= (1 << 16) && !(v & (v - 1)))
			frame = (unsigned int)v;
		else
			return -1;
	}
	return optind - 1;
}

/** main() - Run the mode the arguments name. Return: exit status (file comment). */
int main(int argc, char **argv)
{
	int skip = options(argc, argv);
	double secs;

	if (skip < 0)
		return usage();
	argc -= skip;
	argv += skip;
	secs = argc > 3 ? atof(argv[3]) : 0;
	if (argc < 4 || secs <= 0)
		return usage();
	libbpf_set_print(quiet);
	libxdp_set_print(quiet_xdp);
	if (!strcmp(argv[1], "xsk-rx"))
		return xsk_rx(argv[2], secs);
	if (!strcmp(argv[1], "xsk-tx"))
		return argc == 8 ? xsk_tx(argv, secs) : usage();
	if (!strcmp(argv[1], "udp-rx"))
		return udp_rx(secs, argc > 4 && !strcmp(argv[4], "gso"));
	if (!strcmp(argv[1], "udp-tx"))
		return argc > 4 ? udp_tx(argv[4], secs, argc > 5 && !strcmp(argv[5], "gso")) : usage();
	return usage();
}
