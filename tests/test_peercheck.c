/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the end-of-run cross-check (app/node/peercheck.[ch]) and its
 * digest messages (lib/htoe/htoe_digest.c): two bridges wired by hand, node 1
 * asking about node 2's memory with a workload's shadow, node 2 answering;
 * the test as the switch, and as an attacker sending messages of its own.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "htoe/htoe.h"
#include "htoe/htoe_digest.h"
#include "htoe/htoe_wire.h"
#include "node/peercheck.h"

#define MEM 4096u
#define MS 1000000ull

static struct htoe_map map[3];
static struct htoe *br[3];
static struct peercheck pc[3];
static uint8_t mem2[MEM], shadow[MEM], busy[MEM / 64];
static uint64_t taint[MEM / 64];
static struct ht_workload wl;
static uint8_t fbuf[HTOE_FRAME_MAX];

static void setup_nodes(void)
{
	char err[256];

	memset(pc, 0, sizeof(pc));
	for (uint16_t id = 1; id <= 2; id++) {
		struct htoe_config c;

		htoe_map_init(&map[id], id);
		assert_int_equal(htoe_map_add_peer(&map[id], (uint16_t)(3 - id), NULL, "peer", err,
						   sizeof(err)), 0);
		for (uint16_t k = 1; k <= 2; k++)
			assert_int_equal(htoe_map_add_range(&map[id], (uint64_t)k << 32, MEM, k,
							    0x100000, "range", err, sizeof(err)), 0);
		assert_int_equal(htoe_map_finalize(&map[id], err, sizeof(err)), 0);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = &map[id];
		c.incarnation = 100u + id;
		br[id] = htoe_new(&c, err, sizeof(err));
		assert_non_null(br[id]);
	}
	pc[1].ask.session = 101;
	ht_wl_fill(7, mem2, MEM);
	ht_wl_fill(7, shadow, MEM);
	struct ht_wl_cfg wc;

	ht_wl_cfg_default(&wc);
	wc.base = 2ull << 32;
	wc.size = MEM;
	wc.n_ops = 0;
	wc.sweep = false;
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = taint;
	assert_int_equal(ht_wl_init(&wl, &wc), 0);
	assert_true(ht_wl_done(&wl));
}

static void free_nodes(void)
{
	htoe_free(br[1]);
	htoe_free(br[2]);
}

/* Frames of both bridges to the other until quiet. */
static void pump(uint64_t now)
{
	unsigned moved;

	do {
		moved = 0;
		for (unsigned id = 1; id <= 2; id++) {
			int len;

			htoe_handle_expiry(br[id], now);
			while ((len = htoe_frame_output(br[id], fbuf, sizeof(fbuf), now,
							HTOE_TX_FLUSH)) > 0) {
				htoe_frame_input(br[3 - id], fbuf, (size_t)len, now);
				moved++;
			}
		}
	} while (moved);
}

/* Both nodes' cross-check steps at time now, with the frames between. */
static void step(uint64_t now)
{
	pc_poll(&pc[1], br[1], &wl, NULL, 0, now);
	pump(now);
	pc_poll(&pc[2], br[2], NULL, mem2, MEM, now);
	pump(now);
	pc_poll(&pc[1], br[1], &wl, NULL, 0, now);
}

static void run_check(void)
{
	pump(0);
	pc_ask_start(&pc[1].ask, 2, pc[1].ask.session, 0, &wl, 0);
	for (uint64_t t = 0; t < 50 && pc_asking(&pc[1].ask); t++)
		step(t * MS);
}

static void test_codec(void **state)
{
	struct htoe_digest_msg m = { .type = HTOE_DIGEST_ANSWER, .status = HTOE_DIGEST_OK,
				     .session = 0x01020304, .id = 9, .crc = 0xCAFEF00D,
				     .offset = 0x1122334455667788ull, .len = 64 }, d;
	uint8_t b[HTOE_DIGEST_MSG_LEN];

	(void)state;
	assert_int_equal(htoe_digest_encode(&m, b, sizeof(b)), HTOE_DIGEST_MSG_LEN);
	assert_int_equal(b[0], 'D');
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), 0);
	assert_true(d.type == m.type && d.status == m.status && d.session == m.session &&
		    d.id == m.id && d.crc == m.crc && d.offset == m.offset && d.len == m.len);
	assert_int_equal(htoe_digest_encode(&m, b, 31), -ENOSPC);
	assert_int_equal(htoe_digest_decode(b, 31, &d), -EBADMSG);
	b[1] = 2;
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), -EPROTONOSUPPORT);
	b[1] = 1;
	b[0] = 0x4C;
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), -EPROTO);
	/* a REQUEST carries no status nor CRC; a range never wraps, never empty */
	m.type = HTOE_DIGEST_REQUEST;
	htoe_digest_encode(&m, b, sizeof(b));
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), -EBADMSG);
	m.crc = 0;
	m.offset = UINT64_MAX;
	htoe_digest_encode(&m, b, sizeof(b));
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), -EBADMSG);
	m.offset = 0;
	m.len = 0;
	htoe_digest_encode(&m, b, sizeof(b));
	assert_int_equal(htoe_digest_decode(b, sizeof(b), &d), -EBADMSG);
}

/* Equal memory: confirmed, and node 2 keeps what it answered. */
/* The final check at the end of node 1's run */
static void run_again(void)
{
	assert_true(pc_ask_again(&pc[1].ask, 100 * MS));
	for (uint64_t t = 100; t < 150 && pc_asking(&pc[1].ask); t++)
		step(t * MS);
}

static void test_confirmed(void **state)
{
	(void)state;
	setup_nodes();
	ht_wl_taint(&wl, (2ull << 32) + 128, 64, true); /* one block reported lost */
	mem2[130] ^= 0xFF;                               /* ... and it did change */
	run_check();
	assert_int_equal(pc[1].ask.state, PC_CONFIRMED);
	assert_int_equal(pc[1].ask.n_run, 2);            /* the lost block left out */
	assert_int_equal(pc[1].ask.excluded, 64);
	assert_int_equal(pc[2].ans.n, 2);
	assert_int_equal(pc[2].ans.answered, 2);
	assert_int_equal(pc[2].ans.rec[1].crc, htoe_crc32c(mem2 + 192, MEM - 192));
	free_nodes();
}

/* Node 2's memory differs from the shadow in a byte the workload owns: the
 * run that holds it differs, with both CRCs. */
static void test_differs(void **state)
{
	(void)state;
	setup_nodes();
	mem2[1000] ^= 1;
	run_check();
	assert_int_equal(pc[1].ask.state, PC_DIFFERS);
	assert_int_equal(pc[1].ask.differ, 1);
	assert_int_equal(pc[1].ask.run[0].there, htoe_crc32c(mem2, MEM));
	assert_int_equal(pc[1].ask.run[0].here, htoe_crc32c(shadow, MEM));
	free_nodes();
}

/* The end of the run asks again: a range confirmed first and written since
 * (a forger's write) is CHANGED, with both CRCs, and the answerer's record
 * keeps what it answered first, so that its own end finds the change too. An
 * unchanged memory is confirmed again; the check is asked again only once. */
static void test_again(void **state)
{
	(void)state;
	setup_nodes();
	run_check();
	assert_int_equal(pc[1].ask.state, PC_CONFIRMED);
	uint32_t first = pc[2].ans.rec[0].crc;

	run_again();
	assert_false(pc_ask_again(&pc[1].ask, 200 * MS));
	assert_int_equal(pc[1].ask.final, PC_FINAL_DONE);
	assert_int_equal(pc[1].ask.state, PC_CONFIRMED);
	assert_int_equal(pc[1].ask.changed, 0);
	free_nodes();

	setup_nodes();
	run_check();
	first = pc[2].ans.rec[0].crc;
	mem2[2000] ^= 0x40;                              /* the forged write */
	run_again();
	assert_int_equal(pc[1].ask.final, PC_FINAL_DONE);
	assert_int_equal(pc[1].ask.state, PC_DIFFERS);
	assert_int_equal(pc[1].ask.changed, 1);
	assert_true(pc[1].ask.run[0].changed);
	assert_int_equal(pc[1].ask.run[0].there, htoe_crc32c(mem2, MEM));
	assert_int_equal(pc[1].ask.run[0].here, htoe_crc32c(shadow, MEM));
	assert_int_equal(pc[2].ans.n, 1);
	assert_int_equal(pc[2].ans.rec[0].crc, first);   /* not the CRC answered again */
	free_nodes();

	/* the peer stopped: not compared again, the first verdict stands */
	setup_nodes();
	run_check();
	assert_true(pc_ask_again(&pc[1].ask, 100 * MS));
	assert_true(pc_asking(&pc[1].ask));
	pc_ask_silent(&pc[1].ask);
	assert_int_equal(pc[1].ask.final, PC_FINAL_SILENT);
	assert_int_equal(pc[1].ask.state, PC_CONFIRMED);
	assert_int_equal(pc[1].ask.cur, pc[1].ask.n_run);
	free_nodes();
}

/* The attacker: answers of another session, id or range, malformed messages
 * and other protocols are counted and change nothing; a REQUEST outside the
 * memory is refused (and not recorded). */
static void test_hostile(void **state)
{
	struct htoe_digest_msg a = { .type = HTOE_DIGEST_ANSWER, .session = 101, .id = 1,
				     .offset = 0, .len = MEM };
	uint8_t b[HTOE_DIGEST_MSG_LEN + 1] = { 0 };

	(void)state;
	setup_nodes();
	pump(0);
	pc_ask_start(&pc[1].ask, 2, 101, 0, &wl, 0);
	a.id = pc[1].ask.id;
	a.crc = htoe_crc32c(shadow, MEM) ^ 1;       /* a lie, in four wrong envelopes */
	a.session = 999;
	htoe_digest_encode(&a, b, sizeof(b));
	assert_int_equal(htoe_ctrl_send(br[2], 1, b, HTOE_DIGEST_MSG_LEN), 0);
	a.session = 101;
	a.id++;
	htoe_digest_encode(&a, b, sizeof(b));
	assert_int_equal(htoe_ctrl_send(br[2], 1, b, HTOE_DIGEST_MSG_LEN), 0);
	a.id--;
	a.len = 64;
	htoe_digest_encode(&a, b, sizeof(b));
	assert_int_equal(htoe_ctrl_send(br[2], 1, b, HTOE_DIGEST_MSG_LEN), 0);
	a.len = MEM;
	htoe_digest_encode(&a, b, sizeof(b));
	assert_int_equal(htoe_ctrl_send(br[2], 1, b, HTOE_DIGEST_MSG_LEN + 1), 0); /* too long */
	b[0] = 0x4C;
	assert_int_equal(htoe_ctrl_send(br[2], 1, b, HTOE_DIGEST_MSG_LEN), 0);     /* a lease's */
	pump(0);
	pc_poll(&pc[1], br[1], &wl, NULL, 0, 0);
	assert_int_equal(pc[1].ans.stale, 3);
	assert_int_equal(pc[1].ans.bad, 2);
	assert_true(pc_asking(&pc[1].ask));
	assert_int_equal(pc[1].ask.cur, 0);
	/* the genuine answer still counts */
	for (uint64_t t = 0; t < 50 && pc_asking(&pc[1].ask); t++)
		step(t * MS);
	assert_int_equal(pc[1].ask.state, PC_CONFIRMED);
	/* a REQUEST beyond node 2's memory: refused, nothing recorded */
	unsigned n = pc[2].ans.n;
	pc_ask_start(&pc[1].ask, 2, 101, MEM - 64, &wl, 0);
	for (uint64_t t = 0; t < 50 && pc_asking(&pc[1].ask); t++)
		step(t * MS);
	assert_int_equal(pc[1].ask.state, PC_DIFFERS);
	assert_int_equal(pc[1].ask.run[0].status, HTOE_DIGEST_E_RANGE);
	assert_int_equal(pc[2].ans.refused, 1);
	assert_int_equal(pc[2].ans.n, n);
	free_nodes();
}

/* Unanswered requests are sent again, with backoff. */
static void test_retry(void **state)
{
	(void)state;
	setup_nodes();
	pump(0);
	pc_ask_start(&pc[1].ask, 2, 101, 0, &wl, 0);
	for (uint64_t t = 0; t <= 100; t++) {   /* node 2 never answers */
		pc_poll(&pc[1], br[1], &wl, NULL, 0, t * MS);
		pump(t * MS);
	}
	/* at 0, 10, 30, 70 ms */
	assert_int_equal(pc[1].ask.requests, 4);
	assert_true(pc_asking(&pc[1].ask));
	free_nodes();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_confirmed),
		cmocka_unit_test(test_differs),
		cmocka_unit_test(test_again),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_retry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
