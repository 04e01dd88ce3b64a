/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_engine.c
 * libFuzzer target: one engine fed arbitrary packet sequences from several
 * simulated peers. The input is a program: a settings header, then
 * operations (DATA packets and bursts of them, every control packet type,
 * raw bytes, application calls, time steps, allocation failures, output
 * draining, event handling). Invariants, checked after every operation and
 * at the end (fuzz_engine_check.c): no crash or sanitizer report, memory
 * within the caps, well-formed output carrying exactly the bytes given,
 * bit-exact delivery, each client RPC ends once, and a clean teardown
 * with allocs == frees.
 */
#include <stddef.h>
#include <string.h>

#include "fuzz_engine.h"
#include "fuzz_pattern.h"
#include "homa/wire.h"
#include "sim/modpeer.h"

/** pick() - Element of a menu chosen by the next input byte. */
#define pick(in, menu) ((menu)[fz_u8(in) % (sizeof(menu) / sizeof((menu)[0]))])

/** setup_settings() - Small caps and fast timers, varied by the input header. */
static void setup_settings(struct fe_world *w)
{
	static const uint32_t mtus[] = {200, 600, 1472, 9000};
	static const uint32_t unsched[] = {1400, 5000, 10000, 40000};
	static const uint64_t max_msg[] = {100000, 1u << 20, 4u << 20};
	static const uint64_t rx_caps[] = {256u << 10, 512u << 10, 1u << 20};
	static const uint32_t rpcs[] = {8, 32, 256};
	static const uint32_t timeouts[] = {8, 20, 100};
	static const uint32_t ctlq[] = {16, 64, 256};
	struct homa_settings *s = &w->s;
	uint8_t flags = fz_u8(&w->in);

	homa_settings_default(s);
	s->mtu = pick(&w->in, mtus);
	s->unsched_bytes = pick(&w->in, unsched);
	s->max_incoming = 100000;
	s->max_message = pick(&w->in, max_msg);
	s->max_rx_buffered = pick(&w->in, rx_caps);
	s->max_tx_buffered = 1u << 20;
	s->max_rpcs = pick(&w->in, rpcs);
	s->timeout_ticks = pick(&w->in, timeouts);
	s->max_control_queue = pick(&w->in, ctlq);
	s->start_msg = flags & 1;
	s->dynamic_cutoffs = flags & 2;
	s->incast_threshold = flags & 4 ? 2 : 0;
	s->num_priorities = flags & 8 ? 8 : 4;
	s->num_unsched_priorities = flags & 8 ? 4 : 2;
	if (!(flags & 8)) {
		memset(s->unsched_cutoffs, 0, sizeof(s->unsched_cutoffs));
		s->unsched_cutoffs[3] = 1000;
		s->unsched_cutoffs[2] = 0xffffffffu;
	}
	if (homa_settings_validate(s, NULL))
		fz_fail("fuzz settings rejected");
}

/** setup() - Create the engine and the peers. Return: 0, or -1 if creation failed. */
static int setup(struct fe_world *w, const uint8_t *data, size_t size)
{
	int i;

	memset(w, 0, offsetof(struct fe_world, pkt));
	fz_in_init(&w->in, data, size);
	fz_alloc_init(&w->fa, &w->hooks);
	setup_settings(w);
	w->local = homa_addr_ipv4(0x0a000001);
	w->lport = 100;
	for (i = 0; i < FE_PEERS; i++)
		w->peer[i] = homa_addr_ipv4(0x0a000100 + (uint32_t)i);
	memset(&w->peer[FE_RAW_PEER], 0, sizeof(homa_addr));
	w->peer[FE_RAW_PEER].b[0] = 0xfe; /* an IPv6 peer for the raw packets */
	w->peer[FE_RAW_PEER].b[15] = 1;
	w->now = 1000000000ull;
	if (homa_engine_new(&w->e, &w->s, &w->local, w->lport, &w->hooks, w->now))
		return -1;
	homa_engine_set_server(w->e, true);
	return 0;
}

/**
 * send_pkt() - Encode @p from simulated peer @peer and give it to the
 * engine. Peer FE_MODULE_PEER is module-shaped: its packets take the Linux
 * module's conventions (sim/modpeer.h: flags 6, no extension marker,
 * original DATA with offset -1 and the offset in seq).
 */
static void send_pkt(struct fe_world *w, int peer, struct homa_pkt *p)
{
	int n = homa_wire_encode(p, w->pkt, sizeof(w->pkt));
	int r;

	if (n <= 0)
		return;
	if (peer == FE_MODULE_PEER)
		homa_sim_module_tx(w->pkt, (size_t)n, w->s.unsched_bytes);
	r = homa_engine_input(w->e, &w->peer[peer], w->pkt, (size_t)n, w->now);
	if (r != 0 && (r < HOMA_INPUT_DROPPED || r >= HOMA_INPUT_DROPPED + HOMA_DROP_REASONS))
		fz_fail("input returned %d", r);
}

/**
 * add_tuple() - Remember that simulated client @c may send a @len-byte request.
 * Return: false if the table is full (the packet must then not be sent).
 */
static bool add_tuple(struct fe_world *w, int peer, int port, uint64_t c, uint32_t len)
{
	int i;

	for (i = 0; i < w->ntu; i++)
		if (w->tu[i].peer == peer && w->tu[i].port == port && w->tu[i].c == c &&
		    w->tu[i].len == len)
			return true;
	if (w->ntu == FE_MAX_TUPLES)
		return false;
	w->tu[w->ntu++] = (struct fe_tuple){peer, port, c, len};
	return true;
}

/**
 * pick_target() - Choose who a simulated packet speaks for: a simulated
 * client's request (sender_id even), or a simulated server answering one of
 * the engine's client RPCs (sender_id = id ^ 1). Fills @p's ids and ports.
 * Return: true if the packet belongs to a request (checked via tuples).
 */
static bool pick_target(struct fe_world *w, struct homa_pkt *p, int *peer, int *port)
{
	uint8_t sel = fz_u8(&w->in);

	memset(p, 0, sizeof(*p));
	p->dport = (sel & 0x80) && (fz_u8(&w->in) & 0xf) == 0 ? 4242 : w->lport;
	if ((sel & 1) && w->ncl) {
		const struct fe_client *c = &w->cl[fz_u8(&w->in) % w->ncl];

		*peer = c->peer;
		*port = c->port;
		p->sender_id = c->id ^ 1;
		p->sport = fe_port(c->port);
		return false;
	}
	*peer = (sel >> 1) % FE_PEERS;
	*port = (sel >> 3) % FE_PORTS;
	p->sport = fe_port(*port);
	p->sender_id = (sel & 0x40) ? (uint64_t)fz_u32(&w->in) << 1 : 2u * (1 + (sel >> 4) % 4);
	return true;
}

/** msg_length() - A message length from a menu that hits the interesting edges. */
static uint32_t msg_length(struct fe_world *w)
{
	uint32_t pay = w->s.mtu - HOMA_DATA_HDR_LEN;
	uint32_t menu[] = {1, 100, pay, pay + 1, 3 * pay, 10000, 65536, 65537, 200000,
			   (uint32_t)w->s.max_message, (uint32_t)w->s.max_message + 1, 0};

	menu[11] = fz_u32(&w->in) % ((uint32_t)w->s.max_message + 2);
	if (menu[11] == 0)
		menu[11] = 1;
	return pick(&w->in, menu);
}

/**
 * fill_data() - Make @p a DATA packet of message @len at @off with up to
 * @n bytes of the pattern for @seed. Return: false if no byte fits.
 */
static bool fill_data(struct fe_world *w, struct homa_pkt *p, uint32_t len, uint32_t off,
		      uint32_t n, uint64_t seed)
{
	uint32_t max = w->s.mtu - HOMA_DATA_HDR_LEN;

	if (off >= len)
		return false;
	if (n > max)
		n = max;
	if (n > len - off)
		n = len - off;
	if (n == 0)
		return false;
	fz_pattern_fill(w->pay, seed, off, n);
	p->type = HOMA_PKT_DATA;
	p->seq = off;
	p->u.data.message_length = len;
	p->u.data.offset = off;
	p->u.data.payload = w->pay;
	p->u.data.payload_len = n;
	return true;
}

/** data_header() - Input-chosen DATA header fields (incoming, ack, flags, ...). */
static void data_header(struct fe_world *w, struct homa_pkt *p, uint64_t c)
{
	uint8_t f = fz_u8(&w->in);
	uint32_t len = p->u.data.message_length;

	p->u.data.incoming = f & 1 ? len : f & 2 ? w->s.unsched_bytes : fz_u32(&w->in);
	if (f & 4) {
		p->u.data.ack.client_id = f & 8 ? c : (uint64_t)fz_u16(&w->in);
		p->u.data.ack.server_port = w->lport;
	}
	p->u.data.retransmit = (f >> 4) & 1;
	p->u.data.cutoff_version = (f & 0x20) ? fz_u8(&w->in) : 0;
	p->ext = (f & 0x40) ? HOMA_EXT_INCAST : 0;
}

/** op_data() - One DATA packet (or, with @burst, a strided run of them). */
static void op_data(struct fe_world *w, bool burst)
{
	struct homa_pkt p;
	int peer, port, i, count = 1;
	bool req = pick_target(w, &p, &peer, &port);
	uint32_t len = msg_length(w), off, stride = 0, n;
	uint64_t seed = req ? fe_request_seed(peer, port, p.sender_id, len)
			    : fe_response_seed(peer, port, p.sender_id ^ 1, len);

	off = fz_u8(&w->in) & 1 ? fz_u32(&w->in) % len : (w->s.mtu - HOMA_DATA_HDR_LEN) * fz_u8(&w->in);
	n = fz_u8(&w->in) & 1 ? 1u + fz_u16(&w->in) : w->s.mtu;
	if (burst) {
		/* many small packets (hole-making) are cheap; big ones capped at 256 KiB */
		count = 1 + fz_u16(&w->in) % 4096;
		stride = 1 + fz_u16(&w->in);
		if ((uint64_t)count * (n < w->s.mtu ? n : w->s.mtu) > (256u << 10))
			count = (int)((256u << 10) / (n < w->s.mtu ? n : w->s.mtu)) + 1;
	}
	if (req && !add_tuple(w, peer, port, p.sender_id, len))
		return;
	data_header(w, &p, p.sender_id);
	for (i = 0; i < count; i++, off += stride) {
		if (!fill_data(w, &p, len, off, n, seed))
			break;
		send_pkt(w, peer, &p);
	}
}

/** op_control() - A control packet of an input-chosen type and fields. */
static void op_control(struct fe_world *w)
{
	static const uint8_t types[] = {
		HOMA_PKT_GRANT, HOMA_PKT_RESEND, HOMA_PKT_RPC_UNKNOWN, HOMA_PKT_BUSY,
		HOMA_PKT_CUTOFFS, HOMA_PKT_FREEZE, HOMA_PKT_NEED_ACK, HOMA_PKT_ACK,
		HOMA_PKT_START_MSG};
	struct homa_pkt p;
	int peer, port, i;
	uint8_t type = pick(&w->in, types);

	pick_target(w, &p, &peer, &port);
	p.type = type;
	switch (type) {
	case HOMA_PKT_GRANT:
	case HOMA_PKT_RESEND:
		p.u.resend.offset = fz_u8(&w->in) & 1 ? fz_u32(&w->in) : 1000u * fz_u8(&w->in);
		p.u.resend.length = fz_u8(&w->in) & 1 ? HOMA_RESEND_ALL : fz_u16(&w->in);
		p.u.resend.priority = fz_u8(&w->in) % 8;
		if (type == HOMA_PKT_GRANT) {
			uint32_t off = p.u.resend.offset;
			uint8_t prio = p.u.resend.priority;

			p.u.grant.offset = off;
			p.u.grant.priority = prio;
		}
		break;
	case HOMA_PKT_CUTOFFS:
		for (i = 0; i < HOMA_MAX_PRIORITIES; i++)
			p.u.cutoffs.cutoffs[i] = fz_u8(&w->in) & 1 ? 0xffffffffu : fz_u16(&w->in);
		p.u.cutoffs.version = fz_u8(&w->in);
		break;
	case HOMA_PKT_ACK:
		p.u.ack.num_acks = fz_u8(&w->in) % (HOMA_MAX_ACKS + 1);
		for (i = 0; i < p.u.ack.num_acks; i++) {
			p.u.ack.acks[i].client_id = 2u * (1 + fz_u8(&w->in) % 4);
			p.u.ack.acks[i].server_port = fz_u8(&w->in) & 1 ? fz_u16(&w->in) : w->lport;
		}
		break;
	case HOMA_PKT_START_MSG:
		p.u.start.message_length = msg_length(w);
		if ((p.sender_id & 1) == 0 &&
		    !add_tuple(w, peer, port, p.sender_id, p.u.start.message_length))
			return;
		break;
	default:
		break;
	}
	send_pkt(w, peer, &p);
}

/** op_raw() - Arbitrary bytes from the raw peer, with our port patched in sometimes. */
static void op_raw(struct fe_world *w)
{
	size_t got;
	uint16_t want = fz_u16(&w->in) % 2048;
	uint8_t fix = fz_u8(&w->in);
	const uint8_t *b = fz_bytes(&w->in, want, &got);
	int r;

	memcpy(w->pkt, b, got);
	if ((fix & 1) && got >= 4) {
		w->pkt[2] = (uint8_t)(w->lport >> 8);
		w->pkt[3] = (uint8_t)w->lport;
	}
	if ((fix & 2) && got >= 12)
		w->pkt[11] = (uint8_t)(HOMA_PKT_FIRST + (fix >> 2) % HOMA_PKT_TYPES);
	r = homa_engine_input(w->e, &w->peer[FE_RAW_PEER], w->pkt, got, w->now);
	if (r < 0 || (r > 0 && r < HOMA_INPUT_DROPPED))
		fz_fail("input returned %d", r);
}

/** op_send() - The application starts a client RPC to a simulated server. */
static void op_send(struct fe_world *w)
{
	struct fe_client *c;
	struct homa_iov iov;
	uint8_t *buf = w->pkt + 2048;
	uint32_t len = msg_length(w) % 60000 + 1;
	int peer = fz_u8(&w->in) % FE_PEERS, port = fz_u8(&w->in) % FE_PORTS, r;
	uint64_t id;

	if (w->ncl == FE_MAX_CLIENT)
		return;
	c = &w->cl[w->ncl];
	c->seed = 0x1234567ull * (uint64_t)(w->ncl + 1);
	fz_pattern_fill(buf, c->seed, 0, len);
	iov.base = buf;
	iov.len = len;
	r = homa_engine_send_request(w->e, &w->peer[peer], fe_port(port), &iov, 1, 7, w->now, &id);
	if (r == 0) {
		c->id = id;
		c->len = len;
		c->peer = peer;
		c->port = port;
		c->done = false;
		w->ncl++;
	} else if (r != HOMA_EAGAIN && r != HOMA_ENOMEM && r != HOMA_EPEERDEAD &&
		   r != HOMA_ESHUTDOWN && r != HOMA_EMSGSIZE) {
		fz_fail("send_request failed with %d", r);
	}
}

/** op_reply() - The application answers (or aborts) a delivered request. */
static void op_reply(struct fe_world *w)
{
	struct fe_server *sv;
	struct homa_iov iov;
	uint8_t *buf = w->pkt + 2048;
	uint32_t len = 1 + fz_u16(&w->in) % 50000;
	uint8_t how = fz_u8(&w->in);
	int r;

	if (!w->nsv)
		return;
	sv = &w->sv[how % w->nsv];
	if (how & 0x80) {
		r = homa_engine_abort(w->e, sv->handle, w->now);
		if (r != 0 && r != HOMA_ENOTFOUND)
			fz_fail("abort returned %d", r);
		sv->open = false;
		return;
	}
	if (sv->ambiguous)
		w->anon[sv->peer][sv->port] = true;
	fz_pattern_fill(buf, fe_reply_seed(sv->peer, sv->port, sv->ambiguous ? FE_ANON_C : sv->c),
			0, len);
	iov.base = buf;
	iov.len = len;
	r = homa_engine_send_reply(w->e, sv->handle, &iov, 1, w->now);
	if (r == 0 && !sv->open)
		fz_fail("second reply to handle %llu accepted", (unsigned long long)sv->handle);
	if (r == 0 || r == HOMA_ENOTFOUND || r == HOMA_ESTATE)
		sv->open = false;
	else if (r != HOMA_EAGAIN && r != HOMA_ENOMEM)
		fz_fail("send_reply failed with %d", r);
}

/** op_abort_client() - The application aborts one of its client RPCs. */
static void op_abort_client(struct fe_world *w)
{
	struct fe_client *c;

	if (!w->ncl)
		return;
	c = &w->cl[fz_u8(&w->in) % w->ncl];
	if (homa_engine_abort(w->e, c->id, w->now) == 0) {
		if (c->done)
			fz_fail("abort of finished client RPC %llu succeeded", (unsigned long long)c->id);
		c->done = true;
	}
}

/** op_time() - Move time forward and run every timer that came due. */
static void op_time(struct fe_world *w)
{
	static const uint64_t steps[] = {0, 1000, 100000, 1000000, 5000000, 50000000, 1000000000};
	uint64_t dt = pick(&w->in, steps) * (1 + fz_u8(&w->in) % 4);
	int i;

	w->now += dt;
	for (i = 0; i < 2000 && homa_engine_next_deadline(w->e) <= w->now; i++) {
		homa_engine_on_timer(w->e, w->now);
		if (homa_engine_want_output(w->e, w->now))
			fe_drain_output(w, 64);
	}
}

/** op_alloc() - Change how allocations fail. */
static void op_alloc(struct fe_world *w)
{
	uint8_t m = fz_u8(&w->in);

	fz_alloc_fail(&w->fa, m % FZ_FAIL_MODES, m & 0x80 ? fz_u16(&w->in) : fz_u8(&w->in) % 8);
}

/** run_op() - Decode and run one operation. */
static void run_op(struct fe_world *w)
{
	uint8_t op = fz_u8(&w->in);

	switch (op % 16) {
	case 0: case 1: case 2: op_data(w, false); break;
	case 3: op_data(w, true); break;
	case 4: case 5: op_control(w); break;
	case 6: op_raw(w); break;
	case 7: op_send(w); break;
	case 8: op_reply(w); break;
	case 9: op_abort_client(w); break;
	case 10: case 11: op_time(w); break;
	case 12: op_alloc(w); break;
	case 13: fe_drain_output(w, 1 + fz_u8(&w->in)); break;
	case 14: fe_take_events(w, op & 0x10); break;
	default:
		if (op & 0x10)
			fe_release_held(w);
		else
			homa_engine_set_server(w->e, op & 0x20);
		break;
	}
}

/** LLVMFuzzerTestOneInput() - libFuzzer entry point. Return: 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fe_world w;
	int ops = 0;

	if (setup(&w, data, size))
		fz_fail("engine creation failed with default allocator");
	while (fz_in_more(&w.in) && ops++ < 1024) {
		run_op(&w);
		fe_check_memory(&w);
	}
	fe_finish(&w);
	return 0;
}
