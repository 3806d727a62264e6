/* SPDX-License-Identifier: BSD-3-Clause
 * An application embedding the sans-I/O bridge, built by tests/test_install.sh
 * against the INSTALLED headers and libraries only:
 *   cc embed.c $(pkg-config --cflags --libs htoe)
 * Two bridges (nodes 1 and 2) in one process, this program being their
 * network and node 1's HT requester: the VLs come up, node 1's posted
 * 64-byte write to node 2's memory travels as a frame and comes out of
 * node 2's bridge at the translated local address with its data, and a
 * control message goes the other way. Exit 0 when all of that holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <htmodel/ht_packet.h>
#include <htoe/htoe.h>

#define MEM_BASE 0x100000ull
#define MEM_SIZE 0x10000ull

static struct htoe_map map[3];
static struct htoe *br[3];

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "embed: %s:%d: %s\n", __FILE__, \
	__LINE__, #c); return 1; } } while (0)

/* Deliver every frame either bridge wants to send until both are quiet. */
static unsigned pump(uint64_t now)
{
	static uint8_t f[HTOE_FRAME_MAX];
	unsigned moved, total = 0;

	do {
		moved = 0;
		for (int id = 1; id <= 2; id++) {
			int len;

			htoe_handle_expiry(br[id], now);
			while ((len = htoe_frame_output(br[id], f, sizeof(f), now, HTOE_TX_FLUSH)) > 0) {
				htoe_frame_input(br[3 - id], f, (size_t)len, now);
				moved++;
			}
		}
		total += moved;
	} while (moved);
	return total;
}

int main(void)
{
	uint8_t buf[HT_MAX_PKT_LEN], msg[16];
	struct ht_pkt p, q;
	uint16_t from = 0;
	char err[256];
	int n;

	for (uint16_t id = 1; id <= 2; id++) {
		struct htoe_config c;

		htoe_map_init(&map[id], id);
		CHECK(htoe_map_add_peer(&map[id], 3 - id, NULL, "peer", err, sizeof(err)) == 0);
		for (uint16_t k = 1; k <= 2; k++)
			CHECK(htoe_map_add_range(&map[id], (uint64_t)k << 32, MEM_SIZE, k, MEM_BASE,
						 "range", err, sizeof(err)) == 0);
		CHECK(htoe_map_finalize(&map[id], err, sizeof(err)) == 0);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = &map[id];
		br[id] = htoe_new(&c, err, sizeof(err));
		if (!br[id]) {
			fprintf(stderr, "embed: htoe_new: %s\n", err);
			return 1;
		}
	}
	pump(0);
	CHECK(htoe_vl_is_up(br[1], 2) && htoe_vl_is_up(br[2], 1));

	/* node 1's requester: a posted 64-byte write to node 2's memory */
	memset(&p, 0, sizeof(p));
	p.dword = 1;
	p.posted = 1;
	p.coherent = 1;
	CHECK(ht_pkt_set_cmd(&p, HT_K_WRSIZED) == 0);
	p.unitid = 1;
	p.count = 15;
	p.addr = (2ull << 32) + 0x40;
	p.data_len = 64;
	for (unsigned i = 0; i < 64; i++)
		p.data[i] = (uint8_t)(0xa0 + i);
	n = ht_encode(&p, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(htoe_local_input(br[1], buf, (size_t)n, 1000) == 0);
	CHECK(pump(1000) > 0);

	/* node 2's memory target gets it at the translated local address */
	n = htoe_local_output(br[2], buf, sizeof(buf), 1000);
	CHECK(n > 0);
	CHECK(ht_decode(buf, (size_t)n, &q) == n);
	CHECK(q.kind == HT_K_WRSIZED && q.posted);
	CHECK(q.addr == MEM_BASE + 0x40);
	CHECK(q.data_len == 64 && !memcmp(q.data, p.data, 64));
	CHECK(htoe_local_output(br[2], buf, sizeof(buf), 1000) == 0);

	/* a control message from node 2 to node 1 */
	CHECK(htoe_ctrl_send(br[2], 1, "hello node 1", 12) == 0);
	pump(2000);
	n = htoe_ctrl_recv(br[1], &from, msg, sizeof(msg));
	CHECK(n == 12 && from == 2 && !memcmp(msg, "hello node 1", 12));
	CHECK(htoe_check_invariants(br[1], err, sizeof(err)) == 0);
	CHECK(htoe_check_invariants(br[2], err, sizeof(err)) == 0);

	htoe_free(br[1]);
	htoe_free(br[2]);
	printf("embed: write and control message delivered through two bridges\n");
	return 0;
}
