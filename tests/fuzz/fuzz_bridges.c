/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: two bridges (lib/htoe) and their lease endpoints driven
 * by a sequence of steps decoded from the input. Each step is one
 * of
 *   - deliver the oldest frame one bridge sent to the other (as is),
 *   - deliver a mutated copy of it (bytes changed by the input; CRC resealed
 *     or not), or a copy with another source MAC,
 *   - deliver raw input bytes as a frame (resealed or not),
 *   - drop or duplicate a frame in flight,
 *   - a local HT request (read, posted/non-posted write, flush) to the peer
 *     or to the node itself,
 *   - a time step (ns to seconds),
 *   - a restart of one node (new bridge, new incarnation, new lease
 *     endpoint),
 *   - a lease request or release.
 * After every step both bridges run their timers, their local sides are
 * served (requests answered by a small memory model), and
 * htoe_check_invariants() must hold on both; frame_input must return 0 or a
 * valid drop reason; every frame a bridge sends must parse. No step may
 * crash, leak or trip ASan/UBSan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe/htoe.h"
#include "htoe/htoe_lease.h"
#include "htmodel/ht_packet.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
		__FILE__, __LINE__, #x); abort(); } } while (0)

#define MEM_BASE 0x100000ull
#define MEM_SIZE 0x10000ull
#define QLEN     32u     /* frames in flight per direction */
#define FMAX     1600u   /* MTU 1500 + L2 */

struct fnode {
	uint16_t id;
	uint32_t starts;
	struct htoe_map map;
	struct htoe *b;
	struct htoe_lease_ep *ep;
	int lease;                 /* lessee handle, -1 none */
	uint8_t tag;
};

struct flight {
	uint16_t len;
	uint8_t f[FMAX];
};

static struct fnode N[3];
static struct flight Q[3][QLEN]; /* Q[dst]: frames for node dst */
static unsigned qh[3], qn[3];

struct input {
	const uint8_t *p;
	size_t n;
};

static unsigned take(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint64_t take64(struct input *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | take(in);
	return v;
}

static void node_new(struct fnode *x)
{
	struct htoe_config c;
	struct htoe_lease_cfg lc;
	char err[256];

	htoe_config_defaults(&c);
	c.node_id = x->id;
	htoe_map_node_mac(x->id, c.mac);
	c.map = &x->map;
	c.incarnation = 0x1000u * x->id + x->starts;
	for (unsigned k = 0; k < sizeof(c.nonce_key); k++)
		c.nonce_key[k] = (uint8_t)(c.incarnation * 131u + k);
	c.np_timeout_ns = 5000000;
	c.stall_timeout_ns = 2000000;
	x->b = htoe_new(&c, err, sizeof(err));
	CHECK(x->b);
	htoe_lease_cfg_defaults(&lc);
	lc.node_id = x->id;
	lc.session = c.incarnation;
	lc.map = &x->map;
	lc.default_duration_ns = 50000000;
	lc.max_duration_ns = 100000000;
	lc.grace_ns = 10000000;
	lc.request_timeout_ns = 20000000;
	if (x->id == 2) {
		lc.export_addr = MEM_BASE;
		lc.export_size = MEM_SIZE;
		lc.acl = true;
	}
	x->ep = htoe_lease_new(&lc, err, sizeof(err));
	CHECK(x->ep);
	htoe_lease_acl_sync(x->ep, x->b);
	x->lease = -1;
	x->starts++;
}

static void node_free(struct fnode *x)
{
	htoe_lease_free(x->ep);
	htoe_free(x->b);
	x->ep = NULL;
	x->b = NULL;
}

static void setup(void)
{
	char err[256];

	memset(qh, 0, sizeof(qh));
	memset(qn, 0, sizeof(qn));
	for (uint16_t id = 1; id <= 2; id++) {
		struct fnode *x = &N[id];

		memset(x, 0, sizeof(*x));
		x->id = id;
		htoe_map_init(&x->map, id);
		CHECK(htoe_map_add_peer(&x->map, (uint16_t)(3 - id), NULL, "peer", err,
					sizeof(err)) == 0);
		for (uint16_t k = 1; k <= 2; k++)
			CHECK(htoe_map_add_range(&x->map, (uint64_t)k << 32, MEM_SIZE, k, MEM_BASE,
						 "range", err, sizeof(err)) == 0);
		CHECK(htoe_map_finalize(&x->map, err, sizeof(err)) == 0);
		node_new(x);
	}
}

static void enqueue(unsigned dst, const uint8_t *f, size_t len)
{
	struct flight *q;

	if (dst < 1 || dst > 2 || len > FMAX)
		return;
	if (qn[dst] == QLEN) { /* full: the oldest is lost */
		qh[dst] = (qh[dst] + 1) % QLEN;
		qn[dst]--;
	}
	q = &Q[dst][(qh[dst] + qn[dst]++) % QLEN];
	memcpy(q->f, f, len);
	q->len = (uint16_t)len;
}

static struct flight *oldest(unsigned dst)
{
	return qn[dst] ? &Q[dst][qh[dst]] : NULL;
}

static void pop(unsigned dst)
{
	if (qn[dst]) {
		qh[dst] = (qh[dst] + 1) % QLEN;
		qn[dst]--;
	}
}

static void input(unsigned dst, const uint8_t *f, size_t len, uint64_t now)
{
	int r = htoe_frame_input(N[dst].b, f, len, now);

	CHECK(r <= 0 && r > -HTOE_DROP__COUNT);
}

/* The local side of x: answer requests (a memory target that returns zeros
 * and acknowledges writes), consume responses. */
static void serve_local(struct fnode *x, uint64_t now)
{
	uint8_t buf[HT_MAX_PKT_LEN];
	int n;

	for (unsigned guard = 0; guard < 256 && (n = htoe_local_output(x->b, buf, sizeof(buf),
								      now)) > 0; guard++) {
		struct ht_pkt p, r;

		CHECK(ht_decode(buf, (size_t)n, &p) == n);
		if (ht_pkt_vc(&p) != HT_VC_NP || p.kind == HT_K_RDRESPONSE ||
		    p.kind == HT_K_TGTDONE)
			continue;
		memset(&r, 0, sizeof(r));
		if (p.kind == HT_K_RDSIZED) {
			CHECK(ht_pkt_set_cmd(&r, HT_K_RDRESPONSE) == 0);
			r.count = p.dword ? p.count : 0;
			r.data_len = (uint16_t)(4u * (r.count + 1u));
		} else {
			CHECK(ht_pkt_set_cmd(&r, HT_K_TGTDONE) == 0);
		}
		r.bridge = 1;
		r.unitid = p.unitid;
		r.srctag = p.srctag;
		htoe_local_input_pkt(x->b, &r, now); /* may be refused: counted */
	}
}

static void settle(uint64_t now)
{
	uint8_t f[FMAX];
	char err[256];

	for (uint16_t id = 1; id <= 2; id++) {
		struct fnode *x = &N[id];
		int n;

		htoe_handle_expiry(x->b, now);
		htoe_lease_pump(x->ep, x->b, now);
		serve_local(x, now);
		for (unsigned guard = 0; guard < 4 * QLEN &&
		     (n = htoe_frame_output(x->b, f, sizeof(f), now, HTOE_TX_FLUSH)) > 0; guard++) {
			struct htoe_hdr h;

			CHECK(htoe_frame_parse(f, (size_t)n, 1500, &h, NULL) == 0);
			CHECK(h.src_node == id && h.dst_node == 3 - id);
			enqueue(h.dst_node, f, (size_t)n);
		}
		CHECK(htoe_check_invariants(x->b, err, sizeof(err)) == 0);
	}
}

static void local_request(struct fnode *x, struct input *in, uint64_t now)
{
	struct ht_pkt p;
	unsigned kind = take(in) % 4;
	uint16_t to = (take(in) & 1) ? x->id : (uint16_t)(3 - x->id);
	uint64_t off = (take64(in, 2) * 64) % (MEM_SIZE + 0x1000);

	memset(&p, 0, sizeof(p));
	p.dword = 1;
	p.coherent = 1;
	p.unitid = 1;
	p.srctag = x->tag++ & 31;
	p.addr = ((uint64_t)to << 32) + off;
	switch (kind) {
	case 0:
		CHECK(ht_pkt_set_cmd(&p, HT_K_RDSIZED) == 0);
		p.count = 15;
		break;
	case 1:
	case 2:
		p.posted = kind == 1;
		CHECK(ht_pkt_set_cmd(&p, HT_K_WRSIZED) == 0);
		if (p.posted)
			p.srctag = 0;
		p.count = 15;
		p.data_len = 64;
		memset(p.data, (int)kind, 64);
		break;
	default:
		CHECK(ht_pkt_set_cmd(&p, HT_K_FLUSH) == 0);
		p.addr = 0;
		break;
	}
	htoe_local_input_pkt(x->b, &p, now); /* -EAGAIN/-EINVAL: fine */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	uint64_t now = 0;

	setup();
	settle(now);
	for (unsigned step = 0; in.n && step < 2000; step++) {
		unsigned op = take(&in);
		unsigned dst = 1 + (op >> 7);      /* bit 7: which node receives/acts */
		struct fnode *x = &N[dst];
		struct flight *fl = oldest(dst);
		uint8_t f[FMAX];

		switch (op & 0x0F) {
		case 0:
		case 1:
		case 2: /* the real frame */
			if (fl) {
				memcpy(f, fl->f, fl->len);
				size_t len = fl->len;

				pop(dst);
				input(dst, f, len, now);
			}
			break;
		case 3: /* a mutated copy */
			if (fl) {
				unsigned k = 1 + take(&in) % 4;

				memcpy(f, fl->f, fl->len);
				for (unsigned i = 0; i < k; i++)
					f[take(&in) % fl->len] ^= (uint8_t)(1u + take(&in));
				if (take(&in) & 1)
					htoe_frame_reseal(f, fl->len);
				input(dst, f, fl->len, now);
			}
			break;
		case 4: /* a copy from another source MAC */
			if (fl) {
				memcpy(f, fl->f, fl->len);
				f[6 + take(&in) % 6] ^= (uint8_t)(1u + take(&in));
				input(dst, f, fl->len, now);
			}
			break;
		case 5: { /* raw bytes after a valid Ethernet + HToE prefix */
			size_t len = 14 + take(&in) % 80;

			memset(f, 0, sizeof(f));
			htoe_map_node_mac(dst, f);
			htoe_map_node_mac((uint16_t)(3 - dst), f + 6);
			f[12] = 0x88;
			f[13] = 0xB5;
			for (size_t i = 14; i < len; i++)
				f[i] = (uint8_t)take(&in);
			if (len >= 14 + HTOE_HDR_LEN && (take(&in) & 1))
				htoe_frame_reseal(f, len);
			input(dst, f, len < 60 ? 60 : len, now);
			break;
		}
		case 6: /* lost */
			pop(dst);
			break;
		case 7: /* duplicated */
			if (fl)
				input(dst, fl->f, fl->len, now);
			break;
		case 8:
		case 9:
			local_request(x, &in, now);
			break;
		case 10: /* time */
			now += take64(&in, 1) << (take(&in) % 24);
			break;
		case 11: /* restart */
			node_free(x);
			node_new(x);
			break;
		case 12: /* lease */
			if (dst == 1 && x->lease < 0) {
				x->lease = htoe_lease_request(x->ep, 2, 4096u * (1 + take(&in) % 20),
							      0, now);
			} else if (dst == 1) {
				if (htoe_lease_release(x->ep, x->lease, now) != 0 &&
				    htoe_lease_forget(x->ep, x->lease) == 0)
					x->lease = -1;
			}
			break;
		default: /* vl reset */
			htoe_vl_reset(x->b, (uint16_t)(3 - dst), take(&in) & 1, now);
			break;
		}
		settle(now);
	}
	for (uint16_t id = 1; id <= 2; id++)
		node_free(&N[id]);
	return 0;
}
