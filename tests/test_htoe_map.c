/* SPDX-License-Identifier: BSD-3-Clause
 * HToE mapping layer (lib/htoe/htoe_map.[ch]): range and mask/shift lookups
 * at the edges, local/remote/unmapped, every validation error with its
 * message, node MACs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "htoe/htoe_map.h"
#include "htmodel/ht_rand.h"

static struct htoe_map *M;
static char err[512];

static int setup(void **state)
{
	(void)state;
	M = calloc(1, sizeof(*M));
	return M ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(M);
	return 0;
}

#define OK(call) do { int rc_ = (call); if (rc_) print_message("%s\n", err); \
		assert_int_equal(rc_, HTOE_MAP_OK); } while (0)

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_message("\"%s\" does not contain \"%s\"\n", hay, needle);
		fail();
	}
}

static const uint8_t MAC2[6] = { 0x00, 0x1b, 0x21, 0xaa, 0xbb, 0x02 };

/* local node 1; peers 2 (explicit MAC), 3 (default MAC) */
static void base_peers(void)
{
	htoe_map_init(M, 1);
	OK(htoe_map_add_peer(M, 2, MAC2, "peers:2", err, sizeof(err)));
	OK(htoe_map_add_peer(M, 3, NULL, "peers:3", err, sizeof(err)));
}

static void expect(uint64_t a, uint64_t len, enum htoe_map_kind kind, uint16_t node,
		   uint64_t addr)
{
	struct htoe_map_result r;
	enum htoe_map_kind k = htoe_map_lookup(M, a, len, &r);

	if (k != kind || (kind != HTOE_MAP_UNMAPPED && (r.node != node || r.addr != addr)))
		print_message("lookup 0x%llx+%llu: %s node %u addr 0x%llx\n",
			      (unsigned long long)a, (unsigned long long)len,
			      htoe_map_kind_name(k), r.node, (unsigned long long)r.addr);
	assert_int_equal(k, kind);
	assert_int_equal(r.kind, kind);
	if (kind != HTOE_MAP_UNMAPPED) {
		assert_int_equal(r.node, node);
		assert_int_equal(r.addr, addr);
	} else {
		assert_int_equal(r.range, -1);
		assert_int_equal(r.peer, -1);
	}
	if (kind == HTOE_MAP_REMOTE)
		assert_int_equal(htoe_map_peer(M, (unsigned)r.peer)->node, node);
	else
		assert_int_equal(r.peer, -1);
}

/* ------------------------------------------------------------- ranges */

static void setup_ranges(void)
{
	base_peers();
	/* added out of order on purpose */
	OK(htoe_map_add_range(M, 0x10000000000ull, 0x10000000000ull, 3, 0x200000000000ull,
			      "r3", err, sizeof(err)));
	OK(htoe_map_add_range(M, 0x140000000ull, 0x1000, 3, 0, "r2", err, sizeof(err)));
	OK(htoe_map_add_range(M, 0x10000000, 0x10000000, 1, 0, "r0", err, sizeof(err)));
	OK(htoe_map_add_range(M, 0x100000000ull, 0x40000000, 2, 0x80000000, "r1", err,
			      sizeof(err)));
	OK(htoe_map_add_range(M, 0xFFFFFFFFFFFFF000ull, 0x1000, 2, 0, "top", err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
}

static void test_range_edges(void **state)
{
	(void)state;
	setup_ranges();
	/* r0, local: first byte, last byte, one past, one before */
	expect(0x10000000, 1, HTOE_MAP_LOCAL, 1, 0);
	expect(0x1FFFFFFF, 1, HTOE_MAP_LOCAL, 1, 0x0FFFFFFF);
	expect(0x20000000, 1, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0x0FFFFFFF, 1, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0x0FFFFFFF, 2, HTOE_MAP_UNMAPPED, 0, 0); /* straddles the start */
	expect(0x1FFFFFC0, 64, HTOE_MAP_LOCAL, 1, 0x0FFFFFC0);
	expect(0x1FFFFFC1, 64, HTOE_MAP_UNMAPPED, 0, 0); /* straddles the end */
	expect(0x10000000, 0x10000000, HTOE_MAP_LOCAL, 1, 0); /* the whole range */
	expect(0x10000000, 0x10000001, HTOE_MAP_UNMAPPED, 0, 0);
	/* r1, remote node 2, remote_base 0x80000000 */
	expect(0x100000000ull, 1, HTOE_MAP_REMOTE, 2, 0x80000000);
	expect(0x13FFFFFFFull, 1, HTOE_MAP_REMOTE, 2, 0xBFFFFFFF);
	expect(0x13FFFFFF8ull, 8, HTOE_MAP_REMOTE, 2, 0xBFFFFFF8);
	/* r1 and r2 are adjacent but an access may not straddle them */
	expect(0x13FFFFFFCull, 8, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0x140000000ull, 1, HTOE_MAP_REMOTE, 3, 0);
	expect(0x140000FFFull, 1, HTOE_MAP_REMOTE, 3, 0xFFF);
	expect(0x140001000ull, 1, HTOE_MAP_UNMAPPED, 0, 0);
	/* r3 beyond 40 bits */
	expect(0x10000000000ull, 64, HTOE_MAP_REMOTE, 3, 0x200000000000ull);
	expect(0x1FFFFFFFFFFull, 1, HTOE_MAP_REMOTE, 3, 0x200000000000ull + 0xFFFFFFFFFFull);
	expect(0x20000000000ull, 1, HTOE_MAP_UNMAPPED, 0, 0);
	/* below everything, the reserved window, the top of the space */
	expect(0, 1, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0xFD00000000ull, 4, HTOE_MAP_UNMAPPED, 0, 0);
	expect(UINT64_MAX, 1, HTOE_MAP_REMOTE, 2, 0xFFF);
	expect(UINT64_MAX, 0, HTOE_MAP_REMOTE, 2, 0xFFF); /* len 0 counts as 1 */
	expect(UINT64_MAX - 7, 8, HTOE_MAP_REMOTE, 2, 0xFF8);
	expect(UINT64_MAX - 7, 9, HTOE_MAP_UNMAPPED, 0, 0); /* wraps past 2^64 */
	expect(UINT64_MAX, 2, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0xFFFFFFFFFFFFF000ull - 1, 2, HTOE_MAP_UNMAPPED, 0, 0);

	struct htoe_map_result r;

	assert_int_equal(htoe_map_lookup(M, 0x140000010ull, 4, &r), HTOE_MAP_REMOTE);
	assert_string_equal(M->ranges[r.range].label, "r2");
	assert_int_equal(htoe_map_lookup(M, 0x10000010ull, 4, NULL), HTOE_MAP_LOCAL);
	assert_int_equal(htoe_map_lookup(M, 0x10000010ull, 4, &r), HTOE_MAP_LOCAL);
	assert_string_equal(M->ranges[r.range].label, "r0");
	assert_int_equal(r.peer, -1);
}

/* 256 random disjoint ranges: binary search == linear scan */
static void test_range_random_vs_linear(void **state)
{
	struct ht_rand r;

	(void)state;
	ht_rand_seed(&r, 7);
	for (int round = 0; round < 20; round++) {
		base_peers();
		uint64_t at = 0x1000 + ht_rand_below(&r, 0x1000);
		uint64_t bases[HTOE_MAP_MAX_RANGES], sizes[HTOE_MAP_MAX_RANGES];
		uint16_t nodes[HTOE_MAP_MAX_RANGES];

		for (unsigned i = 0; i < HTOE_MAP_MAX_RANGES; i++) {
			bases[i] = at;
			sizes[i] = 1 + ht_rand_below(&r, 0x10000);
			nodes[i] = (uint16_t)ht_rand_range(&r, 1, 3);
			at += sizes[i] + ht_rand_below(&r, 3) * ht_rand_below(&r, 0x1000);
			if (at >= 0xFD00000000ull)
				fail();
		}
		/* insert in a shuffled order */
		unsigned order[HTOE_MAP_MAX_RANGES];

		for (unsigned i = 0; i < HTOE_MAP_MAX_RANGES; i++)
			order[i] = i;
		for (unsigned i = HTOE_MAP_MAX_RANGES - 1; i > 0; i--) {
			unsigned j = (unsigned)ht_rand_below(&r, i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (unsigned i = 0; i < HTOE_MAP_MAX_RANGES; i++) {
			unsigned k = order[i];

			OK(htoe_map_add_range(M, bases[k], sizes[k], nodes[k], bases[k] * 3,
					      NULL, err, sizeof(err)));
		}
		assert_int_equal(htoe_map_add_range(M, at, 1, 1, 0, "one more", err,
						    sizeof(err)), HTOE_MAP_E_FULL);
		assert_contains(err, "one more");
		OK(htoe_map_finalize(M, err, sizeof(err)));
		unsigned hint = 0;

		for (int q = 0; q < 2000; q++) {
			uint64_t a, len = 1 + ht_rand_below(&r, 80);
			unsigned pick = (unsigned)ht_rand_below(&r, HTOE_MAP_MAX_RANGES);

			switch (q % 4) {
			case 0: a = bases[pick]; break;
			case 1: a = bases[pick] + sizes[pick] - 1; break;
			case 2: a = bases[pick] + sizes[pick]; break;
			default: a = ht_rand_below(&r, at + 0x2000);
			}
			if (q & 4)
				a -= len / 2;
			int want = -1;

			for (unsigned i = 0; i < HTOE_MAP_MAX_RANGES; i++)
				if (a >= bases[i] && a + len - 1 <= bases[i] + sizes[i] - 1)
					want = (int)i;
			struct htoe_map_result res;
			enum htoe_map_kind k = htoe_map_lookup(M, a, len, &res);

			if (want < 0) {
				assert_int_equal(k, HTOE_MAP_UNMAPPED);
			} else {
				assert_int_equal(k, nodes[want] == 1 ? HTOE_MAP_LOCAL : HTOE_MAP_REMOTE);
				assert_int_equal(res.node, nodes[want]);
				assert_int_equal(res.addr, a - bases[want] + bases[want] * 3);
				assert_int_equal(M->ranges[res.range].base, bases[want]);
			}
			/* with a hint (the previous range, a random or an
			 * out-of-range one): the same answer */
			struct htoe_map_result rh;
			unsigned h0 = q % 3 == 0 ? hint : q % 3 == 1 ?
				(unsigned)ht_rand_below(&r, HTOE_MAP_MAX_RANGES) : 100000u + (unsigned)q;

			hint = h0;
			assert_int_equal(htoe_map_lookup_hint(M, a, len, &rh, &hint), k);
			assert_int_equal(rh.kind, res.kind);
			assert_int_equal(rh.node, res.node);
			assert_int_equal(rh.addr, res.addr);
			assert_int_equal(rh.range, res.range);
			assert_int_equal(rh.peer, res.peer);
			assert_int_equal(hint, want < 0 ? h0 : (unsigned)res.range);
		}
	}
}

/* ------------------------------------------------------------- mask */

static void test_mask_top_bits(void **state)
{
	(void)state;
	base_peers();
	OK(htoe_map_set_mask(M, 0xFFFF000000000000ull, 48, 0x1000, "mask", err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	expect(2ull << 48 | 0x1234, 4, HTOE_MAP_REMOTE, 2, 0x2234);
	expect(2ull << 48, 1, HTOE_MAP_REMOTE, 2, 0x1000);
	expect((3ull << 48) - 1, 1, HTOE_MAP_REMOTE, 2, 0xFFFFFFFFFFFFull + 0x1000);
	expect(3ull << 48, 1, HTOE_MAP_REMOTE, 3, 0x1000);
	expect((3ull << 48) - 4, 8, HTOE_MAP_UNMAPPED, 0, 0); /* node 2 -> node 3 */
	expect(1ull << 48 | 0x10, 8, HTOE_MAP_LOCAL, 1, 0x1010);
	expect(0x10, 8, HTOE_MAP_UNMAPPED, 0, 0);          /* node 0 unknown */
	expect(4ull << 48, 8, HTOE_MAP_UNMAPPED, 0, 0);    /* node 4 unknown */
	expect(0xFFFFull << 48, 8, HTOE_MAP_UNMAPPED, 0, 0);
	expect(UINT64_MAX, 2, HTOE_MAP_UNMAPPED, 0, 0);
}

static void test_mask_middle_bits(void **state)
{
	(void)state;
	base_peers();
	/* node = bits 47:40; bits above stay in the address */
	OK(htoe_map_set_mask(M, 0x0000FF0000000000ull, 40, 0, NULL, err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	expect(0x0001020000001000ull, 8, HTOE_MAP_REMOTE, 2, 0x0001000000001000ull);
	expect(0x0000030000000000ull, 1, HTOE_MAP_REMOTE, 3, 0);
	expect(0x00000300FFFFFFFFull, 1, HTOE_MAP_REMOTE, 3, 0xFFFFFFFFull);
	expect(0x000003FFFFFFFFFFull, 1, HTOE_MAP_REMOTE, 3, 0xFFFFFFFFFFull);
	expect(0x000003FFFFFFFFFCull, 8, HTOE_MAP_UNMAPPED, 0, 0); /* into node 4 */
	expect(0x0000010000000000ull, 1, HTOE_MAP_LOCAL, 1, 0);
	/* an access longer than one block but ending on the same node bits */
	expect(0x0000020000000000ull, 0x10000000001ull, HTOE_MAP_UNMAPPED, 0, 0);
	/* ... or a whole period (2^48) long: both ends on node 2, but it runs
	 * through every other node's block */
	expect(0x0000020000000010ull, 0x1000000000000ull, HTOE_MAP_UNMAPPED, 0, 0);
	expect(0x0000020000000010ull, 0x10000000000ull - 0x10, HTOE_MAP_REMOTE, 2, 0x10);
	expect(0x00000000FD000000ull, 1, HTOE_MAP_UNMAPPED, 0, 0);
}

/* ------------------------------------------------------------- validation */

static void test_err_overlap(void **state)
{
	static const struct { uint64_t b1, s1, b2, s2; bool bad; } cases[] = {
		{ 0x1000, 0x1000, 0x1800, 0x1000, true },  /* partial */
		{ 0x1000, 0x1000, 0x1FFF, 0x10, true },    /* last byte shared */
		{ 0x1000, 0x1000, 0x1000, 0x1000, true },  /* identical */
		{ 0x1000, 0x1000, 0x1200, 0x10, true },    /* contained */
		{ 0x1000, 0x1000, 0x0800, 0x4000, true },  /* containing */
		{ 0x1000, 0x1000, 0x2000, 0x1000, false }, /* adjacent */
		{ 0x1000, 0x1000, 0x0000, 0x1000, false }, /* adjacent below */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		base_peers();
		OK(htoe_map_add_range(M, cases[i].b1, cases[i].s1, 2, 0,
				      "bridge.ini:12 [map] range1", err, sizeof(err)));
		OK(htoe_map_add_range(M, cases[i].b2, cases[i].s2, 3, 0,
				      "bridge.ini:14 [map] range3", err, sizeof(err)));
		int rc = htoe_map_finalize(M, err, sizeof(err));

		if (!cases[i].bad) {
			assert_int_equal(rc, HTOE_MAP_OK);
			continue;
		}
		assert_int_equal(rc, HTOE_MAP_E_OVERLAP);
		print_message("%s\n", err);
		assert_contains(err, "bridge.ini:12 [map] range1");
		assert_contains(err, "bridge.ini:14 [map] range3");
		assert_contains(err, "overlaps");
		char hex[64];

		snprintf(hex, sizeof(hex), "[0x%llx, 0x%llx]", (unsigned long long)cases[i].b1,
			 (unsigned long long)(cases[i].b1 + cases[i].s1 - 1));
		assert_contains(err, hex);
		snprintf(hex, sizeof(hex), "[0x%llx, 0x%llx]", (unsigned long long)cases[i].b2,
			 (unsigned long long)(cases[i].b2 + cases[i].s2 - 1));
		assert_contains(err, hex);
		/* a failed finalize leaves the map unusable */
		assert_int_equal(htoe_map_lookup(M, cases[i].b1, 1, NULL), HTOE_MAP_UNMAPPED);
	}
}

static void test_err_size_overflow_reserved(void **state)
{
	(void)state;
	base_peers();
	assert_int_equal(htoe_map_add_range(M, 0x1000, 0, 2, 0, "cfg:3 zero", err, sizeof(err)),
			 HTOE_MAP_E_SIZE);
	assert_contains(err, "cfg:3 zero");
	assert_contains(err, "size 0");
	assert_contains(err, "0x1000");

	assert_int_equal(htoe_map_add_range(M, 0xFFFFFFFFFFFFF000ull, 0x1001, 2, 0, "cfg:4 ovf",
					    err, sizeof(err)), HTOE_MAP_E_OVERFLOW);
	assert_contains(err, "cfg:4 ovf");
	assert_contains(err, "0xfffffffffffff000");
	assert_contains(err, "0x1001");
	assert_contains(err, "overflows 64 bits");
	assert_int_equal(htoe_map_add_range(M, 0x1000, UINT64_MAX, 2, 0, "cfg:5 ovf", err,
					    sizeof(err)), HTOE_MAP_E_OVERFLOW);
	assert_int_equal(htoe_map_add_range(M, 0x1000, 0x1000, 2, 0xFFFFFFFFFFFFF001ull,
					    "cfg:6 rovf", err, sizeof(err)), HTOE_MAP_E_OVERFLOW);
	assert_contains(err, "cfg:6 rovf");
	assert_contains(err, "remote_base 0xfffffffffffff001");
	/* exactly to the top is fine, for both */
	OK(htoe_map_add_range(M, 0x1000, 0x1000, 2, 0xFFFFFFFFFFFFF000ull, "cfg:7", err,
			      sizeof(err)));

	static const struct { uint64_t b, s; bool bad; } rs[] = {
		{ 0xFD00000000ull, 1, true },
		{ 0xFCFFFFF000ull, 0x1001, true },   /* touches the first byte */
		{ 0xFCFFFFF000ull, 0x1000, false },  /* ends just below */
		{ 0xFFFFFFFFFFull, 1, true },        /* the last byte */
		{ 0x10000000000ull, 0x1000, false }, /* just above */
		{ 0xFE00000000ull, 0x100, true },    /* inside */
		{ 0, 0x20000000000ull, true },       /* around */
	};
	for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
		base_peers();
		int rc = htoe_map_add_range(M, rs[i].b, rs[i].s, 2, 0, "cfg:9 [map] rsv", err,
					    sizeof(err));

		assert_int_equal(rc, rs[i].bad ? HTOE_MAP_E_RESERVED : HTOE_MAP_OK);
		if (rs[i].bad) {
			assert_contains(err, "cfg:9 [map] rsv");
			assert_contains(err, "reserved HT window [0xfd00000000, 0xffffffffff]");
		}
	}
}

static void test_err_mask(void **state)
{
	static const struct { uint64_t mask; unsigned shift; const char *msg; } bad[] = {
		{ 0, 0, "mask is 0" },
		{ 0xF0F0000000000000ull, 52, "not contiguous" },
		{ 0x8000000000000001ull, 0, "not contiguous" },
		{ 0xFFFF000000000000ull, 47, "shift 47 is not the lowest set bit" },
		{ 0xFFFF000000000000ull, 49, "(expected 48)" },
		{ 0xFFFFF00000000000ull, 44, "20 bits wide" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		base_peers();
		assert_int_equal(htoe_map_set_mask(M, bad[i].mask, bad[i].shift, 0,
						   "bridge.ini:20 [map] mask", err, sizeof(err)),
				 HTOE_MAP_E_MASK);
		print_message("%s\n", err);
		assert_contains(err, "bridge.ini:20 [map] mask");
		assert_contains(err, bad[i].msg);
	}
	/* remote_base + largest offset overflows */
	base_peers();
	assert_int_equal(htoe_map_set_mask(M, 0xFFFF000000000000ull, 48, 0xFFFF000000000001ull,
					   "m", err, sizeof(err)), HTOE_MAP_E_OVERFLOW);
	assert_contains(err, "overflows");
	OK(htoe_map_set_mask(M, 0xFFFF000000000000ull, 48, 0xFFFF000000000000ull, "m", err,
			     sizeof(err)));
}

static void test_err_mask_reserved(void **state)
{
	(void)state;
	/* node bits 47:40: node 0's window [0, 0xffffffffff] holds the reserved
	 * window; as a peer ... */
	htoe_map_init(M, 1);
	OK(htoe_map_add_peer(M, 0, NULL, "bridge.ini:30 [peers] n0", err, sizeof(err)));
	OK(htoe_map_set_mask(M, 0xFF0000000000ull, 40, 0, "bridge.ini:20 [map] mask", err,
			     sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_RESERVED);
	print_message("%s\n", err);
	assert_contains(err, "bridge.ini:20 [map] mask");
	assert_contains(err, "bridge.ini:30 [peers] n0");
	assert_contains(err, "[0x0, 0xffffffffff]");
	assert_contains(err, "reserved HT window");
	/* ... or as the local node */
	htoe_map_init(M, 0);
	OK(htoe_map_add_peer(M, 2, NULL, NULL, err, sizeof(err)));
	OK(htoe_map_set_mask(M, 0xFF0000000000ull, 40, 0, "bridge.ini:20 [map] mask", err,
			     sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_RESERVED);
	assert_contains(err, "local node 0");
	/* node bits 39:32: node 0xFE's block is inside, 0xFC's is not */
	htoe_map_init(M, 0xFC);
	OK(htoe_map_add_peer(M, 0x100, NULL, NULL, err, sizeof(err)));
	OK(htoe_map_set_mask(M, 0xFFFF00000000ull, 32, 0, NULL, err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	expect(0xFC00000010ull, 4, HTOE_MAP_LOCAL, 0xFC, 0x10);
	expect(0x10000000010ull, 4, HTOE_MAP_REMOTE, 0x100, 0x10);
	htoe_map_init(M, 0xFC);
	OK(htoe_map_add_peer(M, 0xFE, NULL, "p-fe", err, sizeof(err)));
	OK(htoe_map_set_mask(M, 0xFFFF00000000ull, 32, 0, NULL, err, sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_RESERVED);
	assert_contains(err, "p-fe");
	assert_contains(err, "[0xfe00000000, 0xfeffffffff]");
	/* node bit 32 alone (period 2^33): node 0's block in the period of
	 * 0xfd00000000 ends below it, the next one is inside */
	htoe_map_init(M, 0);
	OK(htoe_map_set_mask(M, 0x100000000ull, 32, 0, "bit32", err, sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_RESERVED);
	assert_contains(err, "[0xfe00000000, 0xfeffffffff]");
	/* a narrow mask at bit 12 repeats every 2^20: every node hits it */
	htoe_map_init(M, 1);
	OK(htoe_map_set_mask(M, 0xFF000ull, 12, 0, "low", err, sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_RESERVED);
	assert_contains(err, "[0xfd00001000, 0xfd00001fff]");
}

static void test_err_unknown_node(void **state)
{
	(void)state;
	base_peers();
	OK(htoe_map_add_range(M, 0x1000, 0x1000, 2, 0, "cfg:1 a", err, sizeof(err)));
	OK(htoe_map_add_range(M, 0x4000, 0x1000, 9, 0, "bridge.ini:15 [map] range4", err,
			      sizeof(err)));
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_UNKNOWN_NODE);
	print_message("%s\n", err);
	assert_contains(err, "bridge.ini:15 [map] range4");
	assert_contains(err, "node 9");
	assert_contains(err, "[0x4000, 0x4fff]");
	assert_contains(err, "local node (1)");
	/* the peer added afterwards fixes it */
	OK(htoe_map_add_peer(M, 9, NULL, NULL, err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	expect(0x4000, 1, HTOE_MAP_REMOTE, 9, 0);
}

static void test_err_dup_peers(void **state)
{
	static const uint8_t mac_a[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
	static const uint8_t mac_def5[6] = { 0x02, 0x48, 0x54, 0x00, 0x00, 0x05 };
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	static const uint8_t zero[6] = { 0 };

	(void)state;
	htoe_map_init(M, 1);
	OK(htoe_map_add_peer(M, 4, mac_a, "bridge.ini:31 [peers] n4", err, sizeof(err)));
	assert_int_equal(htoe_map_add_peer(M, 4, NULL, "bridge.ini:40 [peers] n4bis", err,
					   sizeof(err)), HTOE_MAP_E_DUP_NODE);
	print_message("%s\n", err);
	assert_contains(err, "bridge.ini:31 [peers] n4");
	assert_contains(err, "bridge.ini:40 [peers] n4bis");
	assert_contains(err, "node id 4");
	assert_int_equal(htoe_map_add_peer(M, 6, mac_a, "bridge.ini:41 [peers] n6", err,
					   sizeof(err)), HTOE_MAP_E_DUP_MAC);
	print_message("%s\n", err);
	assert_contains(err, "bridge.ini:31 [peers] n4");
	assert_contains(err, "bridge.ini:41 [peers] n6");
	assert_contains(err, "00:11:22:33:44:55");
	/* an explicit MAC equal to another node's default MAC */
	OK(htoe_map_add_peer(M, 5, NULL, "n5", err, sizeof(err)));
	assert_int_equal(htoe_map_add_peer(M, 7, mac_def5, "n7", err, sizeof(err)),
			 HTOE_MAP_E_DUP_MAC);
	assert_contains(err, "n5");
	assert_contains(err, "n7");
	assert_contains(err, "02:48:54:00:00:05");
	assert_int_equal(htoe_map_add_peer(M, 8, mcast, "n8", err, sizeof(err)), HTOE_MAP_E_INVAL);
	assert_contains(err, "multicast");
	assert_int_equal(htoe_map_add_peer(M, 8, zero, "n8", err, sizeof(err)), HTOE_MAP_E_INVAL);
	assert_int_equal(htoe_map_peer_count(M), 2);
}

static void test_err_mode_state_full(void **state)
{
	(void)state;
	base_peers();
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_MODE);
	assert_contains(err, "no mapping");
	OK(htoe_map_add_range(M, 0x1000, 0x1000, 2, 0, "bridge.ini:12 [map] range1", err,
			      sizeof(err)));
	assert_int_equal(htoe_map_set_mask(M, 0xFF000000000000ull, 48, 0,
					   "bridge.ini:20 [map] mask", err, sizeof(err)),
			 HTOE_MAP_E_MODE);
	assert_contains(err, "bridge.ini:12 [map] range1");
	assert_contains(err, "bridge.ini:20 [map] mask");
	/* lookups before finalize: unmapped */
	assert_int_equal(htoe_map_lookup(M, 0x1000, 1, NULL), HTOE_MAP_UNMAPPED);
	OK(htoe_map_finalize(M, err, sizeof(err)));
	assert_int_equal(htoe_map_add_range(M, 0x8000, 0x1000, 2, 0, "late", err, sizeof(err)),
			 HTOE_MAP_E_STATE);
	assert_contains(err, "late");
	assert_int_equal(htoe_map_add_peer(M, 77, NULL, "late peer", err, sizeof(err)),
			 HTOE_MAP_E_STATE);
	assert_int_equal(htoe_map_finalize(M, err, sizeof(err)), HTOE_MAP_E_STATE);

	base_peers();
	OK(htoe_map_set_mask(M, 0xFF000000000000ull, 48, 0, "m1", err, sizeof(err)));
	assert_int_equal(htoe_map_set_mask(M, 0xFF000000000000ull, 48, 0, "m2", err, sizeof(err)),
			 HTOE_MAP_E_MODE);
	assert_contains(err, "m1");
	assert_contains(err, "m2");
	assert_int_equal(htoe_map_add_range(M, 0x1000, 1, 2, 0, "r", err, sizeof(err)),
			 HTOE_MAP_E_MODE);
	assert_contains(err, "m1");

	htoe_map_init(M, 0);
	for (unsigned i = 0; i < HTOE_MAP_MAX_PEERS; i++)
		OK(htoe_map_add_peer(M, (uint16_t)(i + 1), NULL, NULL, err, sizeof(err)));
	assert_int_equal(htoe_map_add_peer(M, 5000, NULL, "p5000", err, sizeof(err)),
			 HTOE_MAP_E_FULL);
	assert_contains(err, "p5000");
	/* default labels; a truncated message is still NUL-terminated */
	char small[8];

	assert_int_equal(htoe_map_add_peer(M, 5000, NULL, NULL, small, sizeof(small)),
			 HTOE_MAP_E_FULL);
	assert_int_equal(strlen(small), 7);
	assert_int_equal(htoe_map_add_peer(M, 5000, NULL, NULL, NULL, 0), HTOE_MAP_E_FULL);
	assert_string_equal(htoe_map_peer(M, 0)->label, "peer0");
	assert_null(htoe_map_peer(M, HTOE_MAP_MAX_PEERS));
	assert_string_equal(htoe_map_strerror(HTOE_MAP_E_OVERLAP), "ranges overlap");
}

/* ------------------------------------------------------------- MACs */

/* A full peer table (1024 peers, node ids spread over 0..65535 with
 * clusters): after finalize each peer is found at its sorted index, every
 * other node id is not (the O(1) node -> peer index agrees with a scan). */
static void test_peer_index_full(void **state)
{
	static bool used[65536];
	unsigned n = 0, k = 0;
	uint64_t s = 99;

	(void)state;
	memset(used, 0, sizeof(used));
	htoe_map_init(M, 0);
	used[0] = true;
	while (n < HTOE_MAP_MAX_PEERS) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		/* half clustered (consecutive ids, colliding hash chains) */
		uint16_t node = (uint16_t)(k++ % 2 ? 1000 + k : (s >> 33));

		if (used[node])
			continue;
		used[node] = true;
		OK(htoe_map_add_peer(M, node, NULL, NULL, err, sizeof(err)));
		n++;
	}
	OK(htoe_map_add_range(M, 0x100000, 0x1000, 0, 0, NULL, err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	assert_int_equal(htoe_map_peer_count(M), HTOE_MAP_MAX_PEERS);
	for (unsigned node = 0; node < 65536; node++) {
		int want = -1;

		for (unsigned i = 0; i < HTOE_MAP_MAX_PEERS && used[node] && node; i++)
			if (htoe_map_peer(M, i)->node == node)
				want = (int)i;
		assert_int_equal(htoe_map_peer_index(M, (uint16_t)node), want);
	}
}

static void test_macs(void **state)
{
	uint8_t mac[6];
	static const uint8_t def1234[6] = { 0x02, 0x48, 0x54, 0x00, 0x12, 0x34 };
	static const uint8_t def3[6] = { 0x02, 0x48, 0x54, 0x00, 0x00, 0x03 };
	static const uint8_t def1[6] = { 0x02, 0x48, 0x54, 0x00, 0x00, 0x01 };
	static const uint8_t mac_self[6] = { 0x00, 0x1b, 0x21, 0x00, 0x00, 0x01 };

	(void)state;
	htoe_map_node_mac(0x1234, mac);
	assert_memory_equal(mac, def1234, 6);
	assert_int_equal(mac[0] & 0x03, 0x02); /* locally administered, unicast */

	setup_ranges();
	assert_int_equal(htoe_map_mac(M, 2, mac), 0);
	assert_memory_equal(mac, MAC2, 6);
	assert_int_equal(htoe_map_mac(M, 3, mac), 0);
	assert_memory_equal(mac, def3, 6);
	assert_int_equal(htoe_map_mac(M, 1, mac), 0); /* local, not listed */
	assert_memory_equal(mac, def1, 6);
	memset(mac, 0xAB, 6);
	assert_int_equal(htoe_map_mac(M, 4, mac), HTOE_MAP_E_UNKNOWN_NODE);
	assert_int_equal(mac[0], 0xAB);
	assert_int_equal(htoe_map_peer_by_mac(M, MAC2), htoe_map_peer_index(M, 2));
	assert_int_equal(htoe_map_peer_by_mac(M, def3), htoe_map_peer_index(M, 3));
	assert_int_equal(htoe_map_peer_by_mac(M, def1), -1);
	assert_true(htoe_map_node_known(M, 1));
	assert_true(htoe_map_node_known(M, 3));
	assert_false(htoe_map_node_known(M, 4));

	/* a cluster-wide peer table that lists the local node too */
	htoe_map_init(M, 1);
	OK(htoe_map_add_peer(M, 3, NULL, NULL, err, sizeof(err)));
	OK(htoe_map_add_peer(M, 1, mac_self, "self", err, sizeof(err)));
	OK(htoe_map_add_peer(M, 2, NULL, NULL, err, sizeof(err)));
	OK(htoe_map_add_range(M, 0x1000, 0x1000, 1, 0x5000, NULL, err, sizeof(err)));
	OK(htoe_map_finalize(M, err, sizeof(err)));
	assert_int_equal(htoe_map_mac(M, 1, mac), 0);
	assert_memory_equal(mac, mac_self, 6);
	expect(0x1800, 8, HTOE_MAP_LOCAL, 1, 0x5800);
	/* peers sorted by node after finalize */
	for (unsigned i = 0; i < htoe_map_peer_count(M); i++)
		assert_int_equal(htoe_map_peer(M, i)->node, i + 1);
	assert_int_equal(htoe_map_peer_index(M, 2), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_edges),
		cmocka_unit_test(test_range_random_vs_linear),
		cmocka_unit_test(test_mask_top_bits),
		cmocka_unit_test(test_mask_middle_bits),
		cmocka_unit_test(test_err_overlap),
		cmocka_unit_test(test_err_size_overflow_reserved),
		cmocka_unit_test(test_err_mask),
		cmocka_unit_test(test_err_mask_reserved),
		cmocka_unit_test(test_err_unknown_node),
		cmocka_unit_test(test_err_dup_peers),
		cmocka_unit_test(test_err_mode_state_full),
		cmocka_unit_test(test_macs),
		cmocka_unit_test(test_peer_index_full),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
