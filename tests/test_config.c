/* SPDX-License-Identifier: BSD-3-Clause
 * The configuration table and its reader (app/bridge/cfgtab.c, cfgkeys.c)
 * and the argument split (args.c), without DPDK: every value type, ranges,
 * defaults, fallbacks, unknown and removed names, duplicates, --set, line
 * numbers in the messages, the input file checks and the reference; the
 * MACsec configuration and key files (macsec_cfg.c, app/common/keyfile.c)
 * and the programs' hex rule; the operation mix of a workload (op_mix.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "args.h"
#include "config.h"
#include "keyfile.h"
#include "op_mix.h"

static char err[2048];

/* a doc from text ("t.ini"), names checked; expect_ok: 0 expected */
static int load(struct cfg_doc *d, const char *text)
{
	cfg_doc_init(d, &br_cfg_schema, "t.ini", err, sizeof(err));
	if (cfg_parse(d, text, strlen(text)))
		return -1;
	return cfg_check_names(d);
}

#define ASSERT_ERR(cond, substr) do { \
		assert_true(cond); \
		if (!strstr(err, substr)) \
			fail_msg("message '%s' lacks '%s'", err, substr); \
	} while (0)

static void test_table_consistent(void **state)
{
	const struct cfg_schema *s = &br_cfg_schema;

	(void)state;
	for (unsigned i = 0; i < s->n_keys; i++) {
		const struct cfg_key *k = &s->keys[i];

		assert_true(k->sects != 0);
		assert_non_null(k->help);
		/* a field holds its maximum */
		if (k->off != CFG_NO_FIELD && (k->type == CFG_UINT || k->type == CFG_SIZE) &&
		    k->size < 8)
			assert_true(k->max < (1ull << (8 * k->size)));
		/* the field has the type's size (cfg_get_typed writes that many bytes) */
		if (k->off != CFG_NO_FIELD) {
			switch (k->type) {
			case CFG_UINT: case CFG_SIZE:
				assert_true(k->size == 1 || k->size == 2 || k->size == 4 || k->size == 8);
				break;
			case CFG_DUR: assert_int_equal(k->size, sizeof(uint64_t)); break;
			case CFG_BOOL: assert_int_equal(k->size, sizeof(bool)); break;
			case CFG_PROB: case CFG_REAL: assert_int_equal(k->size, sizeof(double)); break;
			case CFG_ENUM: assert_int_equal(k->size, sizeof(unsigned)); break;
			case CFG_MAC: assert_int_equal(k->size, 6); break;
			case CFG_STR: assert_true(k->size >= k->max + 1); break;
			case CFG_TEXT: fail_msg("%s: a CFG_TEXT key has no field", k->name); break;
			}
		}
		if ((k->type == CFG_ENUM || k->type == CFG_TEXT))
			assert_non_null(k->syntax);
		/* one entry per name and section kind */
		for (unsigned j = i + 1; j < s->n_keys; j++)
			if (!strcmp(k->name, s->keys[j].name))
				assert_int_equal(k->sects & s->keys[j].sects, 0);
	}
	/* every default that is a value parses: apply everything to empty sections */
	struct cfg_doc d;
	struct br_config g;
	struct br_node_cfg n;
	struct br_member_cfg m;
	struct br_port_cfg p;
	struct impair_cfg ic;
	struct br_wl_cfg w;

	assert_int_equal(load(&d, ""), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_GLOBAL, "global", &g), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_NODE, "node 1", &n), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_MEMBER, "peer 1", &m), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_PORT, "port 1", &p), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_IMPAIR, "impair 1", &ic), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_WL, "workload 1", &w), 0);
	cfg_doc_free(&d);
}

static void test_defaults_and_fallback(void **state)
{
	struct cfg_doc d;
	struct br_config g;
	struct br_node_cfg n1, n2;
	struct br_member_cfg m;
	struct impair_cfg i0, i1;

	(void)state;
	memset(&g, 0, sizeof(g));
	assert_int_equal(load(&d, "[global]\nburst = 8\n[bridge]\nmtu = 9000\nmem_size = 1M\n"
			       "[node 1]\nmtu = 2000\n[node 2]\n[impair]\nloss = 1%\n"
			       "[impair 1]\nloss = 2%\n"), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_GLOBAL, "global", &g), 0);
	assert_int_equal(g.burst, 8);
	assert_int_equal(g.stats_interval_ns, 1000000000ull);  /* the table's default */
	assert_int_equal(g.tx_drain_ns, 100000);
	assert_true(g.exit_when_done);
	htoe_config_defaults(&n1.bc);
	htoe_config_defaults(&n2.bc);
	assert_int_equal(cfg_apply(&d, BR_OBJ_NODE, "node 1", &n1), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_NODE, "node 2", &n2), 0);
	assert_int_equal(n1.bc.mtu, 2000);               /* its own */
	assert_int_equal(n2.bc.mtu, 9000);               /* [bridge]'s */
	assert_int_equal(n2.bc.window, 256);             /* the library's */
	assert_int_equal(n2.bc.rto_init_ns, 1000000);    /* htoe-bridge's over the library's */
	assert_int_equal(n2.bc.n_unitids, 4);
	assert_int_equal(cfg_apply(&d, BR_OBJ_MEMBER, "peer 7", &m), 0);
	assert_int_equal(m.mem_size, 1u << 20);           /* [peer N] over [bridge] */
	assert_int_equal(m.mem_base, 0x100000);
	assert_int_equal(cfg_apply(&d, BR_OBJ_IMPAIR, "impair 0", &i0), 0);
	assert_int_equal(cfg_apply(&d, BR_OBJ_IMPAIR, "impair 1", &i1), 0);
	assert_true(i0.loss == 0.01 && i1.loss == 0.02);
	assert_int_equal(i0.queue, 4096);
	cfg_doc_free(&d);
}

/* one value of [sect] key: its parse result, the message in err */
static int one(const char *sect, const char *key, const char *val, void *out)
{
	char text[512];
	struct cfg_doc d;
	int r;

	snprintf(text, sizeof(text), "; a comment\n[%s]\n\n%s = %s   ; why\n", sect, key, val);
	r = load(&d, text);
	if (!r)
		r = cfg_get_typed(&d, sect, key, out);
	cfg_doc_free(&d);
	return r;
}

static void test_types(void **state)
{
	uint64_t u = 0;
	unsigned u32 = 0;  /* the size of the field: struct br_port_cfg's rxd, ring_size */
	double x = 0;
	bool b = false;
	unsigned e = 9;
	uint8_t mac[6];
	char dev[BR_DEV_MAX];

	(void)state;
	/* integer */
	assert_int_equal(one("port 0", "rxd", "0x40", &u32), 1);
	assert_int_equal(u32, 64);
	ASSERT_ERR(one("port 0", "rxd", "16", &u32) < 0, "t.ini:4: [port 0] rxd = '16': out of range 32..16384");
	ASSERT_ERR(one("port 0", "rxd", "-1", &u32) < 0, "negative, but only 32..16384 is accepted");
	ASSERT_ERR(one("port 0", "rxd", "12x", &u32) < 0, "not a number");
	ASSERT_ERR(one("port 0", "ring_size", "1000", &u32) < 0, "not a power of two");
	/* size */
	assert_int_equal(one("bridge", "mem_size", "64K", &u), 1);
	assert_int_equal(u, 65536);
	ASSERT_ERR(one("bridge", "mem_size", "1000", &u) < 0, "not a multiple of 64");
	ASSERT_ERR(one("bridge", "mem_size", "64X", &u) < 0, "not a size");
	ASSERT_ERR(one("bridge", "mem_size", "-64K", &u) < 0, "negative");
	ASSERT_ERR(one("bridge", "mem_size", "8G", &u) < 0, "out of range 0x40..0x100000000");
	/* duration */
	assert_int_equal(one("bridge", "rto", "1.5ms", &u), 1);
	assert_int_equal(u, 1500000);
	assert_int_equal(one("bridge", "ack_delay", "0", &u), 1);
	assert_int_equal(u, 0);
	ASSERT_ERR(one("bridge", "rto", "200", &u) < 0, "needs a unit");
	ASSERT_ERR(one("bridge", "rto", "5 minutes", &u) < 0, "not a duration");
	ASSERT_ERR(one("bridge", "rto", "100ns", &u) < 0, "out of range 1us..60s");
	/* boolean */
	assert_int_equal(one("port 1", "promisc", "No", &b), 1);
	assert_false(b);
	ASSERT_ERR(one("port 1", "promisc", "maybe", &b) < 0, "not a boolean");
	/* probability: exactly one only as 100% */
	assert_int_equal(one("impair", "loss", "0.5%", &x), 1);
	assert_true(x == 0.005);
	assert_int_equal(one("impair", "dup", "100%", &x), 1);
	assert_true(x == 1.0);
	assert_int_equal(one("impair", "corrupt", "0.25", &x), 1);
	assert_true(x == 0.25);
	ASSERT_ERR(one("impair", "reorder", "1", &x) < 0, "a bare 1 would mean 100%");
	ASSERT_ERR(one("impair", "loss", "1.0", &x) < 0, "write 100% if you mean it, or 1%");
	ASSERT_ERR(one("impair", "loss", "150%", &x) < 0, "not a probability");
	ASSERT_ERR(one("impair", "loss", "-0.1", &x) < 0, "not a probability");
	ASSERT_ERR(one("global", "lcore_pause", "1", &x) < 0, "a bare 1");
	/* number */
	assert_int_equal(one("impair 3", "burst_len", "2.5", &x), 1);
	assert_true(x == 2.5);
	ASSERT_ERR(one("impair 3", "burst_len", "0.5", &x) < 0, "mean burst length in frames, 1..");
	/* enum */
	assert_int_equal(one("impair 0", "direction", "both", &e), 1);
	assert_int_equal(e, 2);
	ASSERT_ERR(one("impair 0", "direction", "up", &e) < 0, "expected tx, rx or both");
	/* MAC */
	assert_int_equal(one("peer 2", "mac", "02:00:00:00:00:09", mac), 1);
	assert_int_equal(mac[5], 9);
	ASSERT_ERR(one("peer 2", "mac", "02:00:00:00:00", mac) < 0, "not a MAC address");
	ASSERT_ERR(one("peer 2", "mac", "01:00:5e:00:00:01", mac) < 0, "not a unicast MAC");
	/* text */
	assert_int_equal(one("port 0", "dev", "net_null0", dev), 1);
	assert_string_equal(dev, "net_null0");
	/* not given: the default (0), the field otherwise untouched */
	u = 77;
	{
		struct cfg_doc d;

		assert_int_equal(load(&d, "[workload 1]\ntarget = 2\n"), 0);
		assert_int_equal(cfg_get_typed(&d, "workload 1", "seed", &u), 0);
		assert_int_equal(u, 77);                      /* "(1000 + N)": the caller's */
		assert_int_equal(cfg_get_typed(&d, "workload 1", "ops", &u), 0);
		assert_int_equal(u, 100000);                  /* the table's */
		cfg_doc_free(&d);
	}
}

static void test_memory_limit(void **state)
{
	struct cfg_doc d;
	uint64_t u;

	(void)state;
	assert_int_equal(load(&d, "[node 1]\nmem_size = 2M\n"), 0);
	d.phys_mem = 1u << 20; /* a 1 MiB machine */
	ASSERT_ERR(cfg_get_typed(&d, "node 1", "mem_size", &u) < 0,
		   "t.ini:2: [node 1] mem_size = '2M': more than the memory of this machine "
		   "(1048576 bytes = 1M");
	d.phys_mem = 4u << 20;
	assert_int_equal(cfg_get_typed(&d, "node 1", "mem_size", &u), 1);
	assert_int_equal(u, 2u << 20);
	cfg_doc_free(&d);
	/* the real machine: far below 4 GiB * 2^20 */
	cfg_doc_init(&d, &br_cfg_schema, "t.ini", err, sizeof(err));
	assert_true(d.phys_mem > (1u << 20) && d.phys_mem < UINT64_MAX);
	cfg_doc_free(&d);
}

static void test_names(void **state)
{
	struct cfg_doc d;

	(void)state;
	ASSERT_ERR(load(&d, "[global]\nstats_interval = 1s\ndurration = 1s\n") < 0,
		   "t.ini:3: [global] durration = '1s': unknown key in a [global] section");
	assert_non_null(strstr(err, "did you mean 'duration'?"));
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global]\n[nodes 3]\nport = 0\n") < 0,
		   "t.ini:2: [nodes 3]: unknown section (did you mean [node 3]?");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[port]\ndev = x\n") < 0, "t.ini:1: [port]: unknown section");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[node 1]\n[node 01]\n") < 0, "t.ini:2: [node 01]: unknown section");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[node 65536]\n") < 0, "t.ini:1: [node 65536]: unknown section");
	cfg_doc_free(&d);
	assert_int_equal(load(&d, "[node 0]\n[port 65535]\n"), 0);
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global]\nmtu = 1500\n") < 0, "'mtu' belongs in [bridge] [node N]");
	cfg_doc_free(&d);
	/* [peer N] takes mem_base but not mtu */
	ASSERT_ERR(load(&d, "[peer 4]\nmem_base = 0\nmtu = 1500\n") < 0, "t.ini:3: [peer 4] mtu");
	cfg_doc_free(&d);
	/* range* is a prefix */
	assert_int_equal(load(&d, "[map]\nrange1 = 0 64K 1\nrange_two = 0x10000 64K 2\n"), 0);
	cfg_doc_free(&d);
}

static void test_removed(void **state)
{
	struct cfg_doc d;

	(void)state;
	ASSERT_ERR(load(&d, "[bridge]\nmtu = 1500\nflush = 2us\n") < 0,
		   "t.ini:3: [bridge] flush = '2us': key flush was removed in 0.2: ");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[node 2]\nflush = 0\n") < 0, "was removed in 0.2");
	cfg_doc_free(&d);
}

static void test_syntax_and_duplicates(void **state)
{
	struct cfg_doc d;

	(void)state;
	ASSERT_ERR(load(&d, "[global]\nduration = 1s\n\n; x\nduration = 2s\n") < 0,
		   "t.ini:5: [global] duration: key given twice (first at line 2)");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[map]\n[global]\n[map]\n") < 0,
		   "t.ini:3: section [map] appears twice (first at line 1)");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global]\nno equals\n") < 0, "t.ini:2: 'no equals' is neither");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "x = 1\n") < 0, "t.ini:1: key 'x' before the first [section]");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global]\n# duration = 1s\n") < 0, "use ';'");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global]\nduration = ; none\n") < 0, "t.ini:2: [global] duration: no value");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global\n") < 0, "t.ini:1: '[' without ']'");
	cfg_doc_free(&d);
	ASSERT_ERR(load(&d, "[global] x\n") < 0, "text after ']'");
	cfg_doc_free(&d);
	/* no final newline, CRLF-free whitespace, comments after values */
	assert_int_equal(load(&d, "  [global]  \n\tburst = 4 ; four"), 0);
	assert_string_equal(cfg_val(&d, "global", "burst"), "4");
	cfg_doc_free(&d);
}

static void test_set(void **state)
{
	struct cfg_doc d;
	uint16_t mtu = 0;
	char where[256];

	(void)state;
	assert_int_equal(load(&d, "[bridge]\nmtu = 1500\n[node 1]\nport = 0\n"), 0);
	assert_int_equal(cfg_set(&d, "bridge.mtu=9000"), 0);
	assert_int_equal(cfg_set(&d, "node 2.port=1"), 0);   /* a new section */
	assert_int_equal(cfg_set(&d, "impair.lost=1%"), 0);  /* checked with the others */
	ASSERT_ERR(cfg_check_names(&d) < 0, "--set: [impair] lost = '1%': unknown key");
	assert_non_null(strstr(err, "did you mean 'loss'?"));
	assert_int_equal(cfg_get_typed(&d, "node 1", "mtu", &mtu), 1);
	assert_int_equal(mtu, 9000);
	cfg_where(&d, "node 1", "mtu", where, sizeof(where));
	assert_string_equal(where, "--set: [bridge] mtu = '9000'");
	cfg_where(&d, "node 1", "port", where, sizeof(where));
	assert_string_equal(where, "t.ini:4: [node 1] port = '0'");
	cfg_where(&d, "node 2", NULL, where, sizeof(where));
	assert_string_equal(where, "--set: [node 2]");
	cfg_where(&d, "node 3", "port", where, sizeof(where));
	assert_string_equal(where, "t.ini: [node 3] port");
	ASSERT_ERR(cfg_set(&d, "impairloss") < 0, "--set 'impairloss': expected SECTION.KEY=VALUE");
	ASSERT_ERR(cfg_set(&d, "impair.loss=") < 0, "expected SECTION.KEY=VALUE");
	assert_int_equal(cfg_set(&d, "bridge.mtu=big"), 0);
	ASSERT_ERR(cfg_get_typed(&d, "node 1", "mtu", &mtu) < 0, "--set: [bridge] mtu = 'big': not a number");
	cfg_doc_free(&d);
}

static void test_secret_never_printed(void **state)
{
	struct cfg_doc d;

	(void)state;
	assert_int_equal(load(&d, "[macsec]\nkey = 00112233445566778899aabbccddeeff\n"), 0);
	cfg_error(&d, "macsec 1", "key", "bad");
	assert_null(strstr(err, "0011"));
	assert_non_null(strstr(err, "t.ini:2: [macsec] key: bad"));
	cfg_doc_free(&d);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/test_config.XXXXXX", path[64];
	struct cfg_doc d;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cfg_doc_init(&d, &br_cfg_schema, "/dev/zero", err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, "/dev/zero") < 0, "/dev/zero: a character device, not a configuration file");
	cfg_doc_free(&d);
	cfg_doc_init(&d, &br_cfg_schema, dir, err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, dir) < 0, "a directory");
	cfg_doc_free(&d);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	cfg_doc_init(&d, &br_cfg_schema, path, err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, path) < 0, "a FIFO");
	cfg_doc_free(&d);
	unlink(path);
	/* a NUL byte on line 3 */
	snprintf(path, sizeof(path), "%s/nul.ini", dir);
	f = fopen(path, "w");
	fwrite("[global]\nburst = 4\nx\0y = 1\n", 1, 26, f);
	fclose(f);
	cfg_doc_init(&d, &br_cfg_schema, "nul.ini", err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, path) < 0, "nul.ini:3: a NUL byte");
	cfg_doc_free(&d);
	/* larger than 1 MiB */
	f = fopen(path, "w");
	for (unsigned i = 0; i < CFG_FILE_MAX / 16 + 1; i++)
		fputs(";;;;;;;;;;;;;;;\n", f);
	fclose(f);
	cfg_doc_init(&d, &br_cfg_schema, "big.ini", err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, path) < 0, "big.ini: 1048592 bytes: a configuration file is at most");
	cfg_doc_free(&d);
	/* a good one, read once */
	f = fopen(path, "w");
	fputs("[global]\nburst = 4\n", f);
	fclose(f);
	cfg_doc_init(&d, &br_cfg_schema, "ok.ini", err, sizeof(err));
	assert_int_equal(cfg_read(&d, path), 0);
	assert_string_equal(cfg_val(&d, "global", "burst"), "4");
	cfg_doc_free(&d);
	unlink(path);
	cfg_doc_init(&d, &br_cfg_schema, "none.ini", err, sizeof(err));
	ASSERT_ERR(cfg_read(&d, path) < 0, "none.ini: cannot open: No such file");
	cfg_doc_free(&d);
	rmdir(dir);
}

/* ---- MACsec configuration and key files (macsec_cfg.c, keyfile.c) ---- */

#define K16 "000102030405060708090a0b0c0d0e0f"
#define K16B "101112131415161718191a1b1c1d1e1f"

static const uint8_t mac1[6] = { 2, 0x48, 0x54, 0, 0, 1 };
static const uint16_t peer2[1] = { 2 };
static const uint8_t mac2[1][6] = { { 2, 0x48, 0x54, 0, 0, 2 } };

/* node 1 with peer 2 from text: 0, or -1 with the message in err */
static int macsec_of(const char *text, struct br_macsec_cfg *mc)
{
	struct cfg_doc d;
	int r;

	if (load(&d, text)) {
		cfg_doc_free(&d);
		return -2;
	}
	r = br_macsec_parse(&d, 1, mac1, 1, peer2, mac2, mc);
	cfg_doc_free(&d);
	return r;
}

/* a key file dir/name of mode `mode` holding text */
static void put(const char *dir, const char *name, unsigned mode, const char *text, char *path,
		size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_macsec_inline(void **state)
{
	static struct br_macsec_cfg mc;
	uint8_t sak[16];

	(void)state;
	/* shared keys; hex with an 0x, with ':' between octets */
	assert_int_equal(macsec_of("[macsec]\nenable = on\nkey0 = 0x" K16 "\n"
				   "key1 = 10:11:12:13:14:15:16:17:18:19:1a:1b:1c:1d:1e:1f\n"
				   "an = 1\n", &mc), 0);
	assert_true(mc.enabled && mc.has_key[0] && mc.has_key[1] && !mc.has_key[2]);
	assert_int_equal(mc.key_len, 16);
	assert_int_equal(mc.an, 1);
	assert_int_equal(mc.key[1][0], 0x10);
	assert_int_equal(mc.key[1][15], 0x1f);
	assert_int_equal(mc.n_peers, 1);
	assert_non_null(strstr(mc.where, "[macsec]"));
	/* [macsec 1] overrides [macsec] key by key */
	assert_int_equal(macsec_of("[macsec]\nenable = on\nkey = " K16 "\n"
				   "[macsec 1]\nmode = integrity\n", &mc), 0);
	assert_true(mc.integrity_only);
	/* off: nothing else is read */
	assert_int_equal(macsec_of("[macsec]\nkey = 00\n", &mc), 0);
	assert_false(mc.enabled);
	/* pairwise from a master key: the 802.1X KDF's SAKs of 1>2 and 2>1 */
	assert_int_equal(macsec_of("[macsec]\nenable = on\nkeys = pairwise\nmaster_key = " K16
				   "\n", &mc), 0);
	assert_true(mc.pairwise && mc.has_pw_tx[0][3] && mc.has_pw_rx[0][3]);
	assert_int_equal(htoe_macsec_pairwise_sak((const uint8_t *)"\x00\x01\x02\x03\x04\x05"
						  "\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f", 16,
						  1, 2, 0, sak, 16), 0);
	assert_memory_equal(mc.pw_tx[0][0], sak, 16);
	br_macsec_cfg_wipe(&mc);
	assert_false(mc.has_key[0]);

	/* refused: file:line, section, key, what was wrong; a key never quoted */
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey = " K16 "00\n", &mc) < 0,
		   "t.ini:3: [macsec] key: gcm-aes-128 needs a 16-octet key (32 hex digits), got 17");
	assert_null(strstr(err, "0001"));
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey = 0:0" K16 "\n", &mc) < 0,
		   "t.ini:3: [macsec] key: not a hex key");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey = " K16 "::\n", &mc) < 0,
		   "t.ini:3: [macsec] key: not a hex key");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\n", &mc) < 0,
		   "t.ini:1: [macsec] key: MACsec is on but no key is given");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey0 = " K16 "\n[macsec 1]\nan = 2\n", &mc) < 0,
		   "t.ini:5: [macsec 1] an = '2': no key for AN 2");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey = " K16 "\nsalt = 00\n", &mc) < 0,
		   "t.ini:4: [macsec] salt = '00': only XPN cipher suites use a salt");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkeys = pairwise\nkey = " K16 "\n", &mc) < 0,
		   "t.ini:4: [macsec] key: keys = pairwise: the SAKs come from master_key");
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkeys = pairwise\nmaster_key = 0011\n", &mc) < 0,
		   "t.ini:4: [macsec] master_key: a master_key is 32 or 64 hex digits");
	ASSERT_ERR(macsec_of("[macsec]\nenable = maybe\n", &mc) < 0,
		   "t.ini:2: [macsec] enable = 'maybe': not a boolean");
}

static void test_macsec_key_file(void **state)
{
	static struct br_macsec_cfg mc;
	char dir[] = "/tmp/test_config.XXXXXX", path[128], text[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* shared keys: named, then a bare one takes the next free AN */
	put(dir, "ok.keys", 0600, "# cluster keys\nkey2 = " K16 "\n\n" K16B " ; AN 0\n", path,
	    sizeof(path));
	snprintf(text, sizeof(text), "[macsec]\nenable = on\nkey_file = %s\n", path);
	assert_int_equal(macsec_of(text, &mc), 0);
	assert_true(mc.has_key[0] && mc.has_key[2] && !mc.has_key[1]);
	assert_int_equal(mc.key[0][0], 0x10);
	assert_int_equal(mc.key[2][0], 0x00);
	/* pairwise lines; pairs without this node are skipped */
	put(dir, "pw.keys", 0600, "key0 1>2 = " K16 "\nkey0 2>1 = " K16B "\nkey0 2>3 = " K16 "\n",
	    path, sizeof(path));
	snprintf(text, sizeof(text), "[macsec]\nenable = on\nkeys = pairwise\nkey_file = %s\n",
		 path);
	assert_int_equal(macsec_of(text, &mc), 0);
	assert_true(mc.has_pw_tx[0][0] && mc.has_pw_rx[0][0] && mc.has_key[0] && !mc.has_key[1]);
	assert_int_equal(mc.pw_rx[0][0][0], 0x10);

	/* refused, with the file and its line */
	static const struct {
		const char *name, *text, *extra, *want;
		unsigned mode;
	} bad[] = {
		{ "open.keys", K16 "\n", "", "has mode 0644: readable or writable by group or "
		  "others; a key file must be private (chmod 600", 0644 },
		{ "name.keys", "key0 = " K16 "\ncolour = 00\n", "", "name.keys:2: colour: unknown name",
		  0600 },
		{ "hex.keys", "key0 = " K16 "x\n", "", "hex.keys:1: key0: not a hex key", 0600 },
		{ "len.keys", "\n\nkey1 = 0011\n", "", "len.keys:3': gcm-aes-128 needs a 16-octet key",
		  0600 },
		{ "twice.keys", "key1 = " K16 "\nkey1 = " K16 "\n", "", "twice.keys:2': the key of AN 1 "
		  "is given twice", 0600 },
		{ "five.keys", K16 "\n" K16 "\n" K16 "\n" K16 "\n" K16 "\n", "",
		  "five.keys:5: more than four keys", 0600 },
		{ "salt.keys", "key0 = " K16 "\nsalt = 0011\n", "", "salt.keys:2: salt: expected 24 hex "
		  "digits", 0600 },
		{ "empty.keys", "# nothing\n", "", "no key in ", 0600 },
		{ "pw.keys2", "key0 1>2 = " K16 "\n", "keys = pairwise\n", "AN 0: no key0 2>1", 0600 },
		{ "bare.keys", K16 "\n", "keys = pairwise\n", "bare.keys:1: keys = pairwise: a key line "
		  "names its pair", 0600 },
		{ "who.keys", "key0 1>9 = " K16 "\n", "keys = pairwise\n", "who.keys:1: node 9 is not a "
		  "member of this configuration", 0600 },
		{ "mix.keys", "key0 1>2 = " K16 "\n", "", "mix.keys:1: pairwise keys need keys = "
		  "pairwise", 0600 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(dir, bad[i].name, bad[i].mode, bad[i].text, path, sizeof(path));
		snprintf(text, sizeof(text), "[macsec]\nenable = on\n%skey_file = %s\n", bad[i].extra,
			 path);
		ASSERT_ERR(macsec_of(text, &mc) < 0, bad[i].want);
		/* where it was configured, and never a key */
		ASSERT_ERR(true, "[macsec] key_file = '");
		assert_null(strstr(err, "0405"));
		unlink(path);
	}
	ASSERT_ERR(macsec_of("[macsec]\nenable = on\nkey_file = /nonexistent/k\n", &mc) < 0,
		   "t.ini:3: [macsec] key_file = '/nonexistent/k': cannot open /nonexistent/k");
	snprintf(text, sizeof(text), "[macsec]\nenable = on\nkey_file = %s\n", dir);
	ASSERT_ERR(macsec_of(text, &mc) < 0, "is not a regular file");
	put(dir, "ok.keys", 0600, K16 "\n", path, sizeof(path));
	snprintf(text, sizeof(text), "[macsec]\nenable = on\nkey = " K16 "\nkey_file = %s\n", path);
	ASSERT_ERR(macsec_of(text, &mc) < 0, "give the keys inline or in key_file");
	unlink(path);
	snprintf(path, sizeof(path), "%s/ok.keys", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/pw.keys", dir);
	unlink(path);
	/* a line longer than the reader's buffer */
	put(dir, "long.keys", 0600, "key0 = " K16 "\n", path, sizeof(path));
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	for (unsigned i = 0; i < HTOE_KEYFILE_LINE_MAX; i++)
		fputc('a', f);
	fputc('\n', f);
	fclose(f);
	snprintf(text, sizeof(text), "[macsec]\nenable = on\nkey_file = %s\n", path);
	ASSERT_ERR(macsec_of(text, &mc) < 0, "long.keys:2: line too long");
	unlink(path);
	rmdir(dir);
}

/* the programs' one hex rule (keyfile.c over htoe_macsec_unhex) */
static void test_hex(void **state)
{
	uint8_t b[8];
	size_t n;

	(void)state;
	assert_int_equal(htoe_hex_octets("024854000001:0001", b, 8, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 8);
	assert_int_equal(b[5], 1);
	assert_int_equal(b[7], 1);
	assert_int_equal(htoe_hex_octets("02-48-54-00-00-01", b, 6, 6, &n, err, sizeof(err)), 0);
	assert_int_equal(htoe_hex_octets("0X0a0B", b, 1, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(b[1], 0x0b);
	ASSERT_ERR(htoe_hex_octets("0g", b, 1, 8, &n, err, sizeof(err)) < 0, "'g' is not a hex digit");
	ASSERT_ERR(htoe_hex_octets("024.854", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "'.' is not a hex digit");
	ASSERT_ERR(htoe_hex_octets("012", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "odd number of hex digits (3)");
	ASSERT_ERR(htoe_hex_octets("0:012", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "':' or '-' only between octets");
	ASSERT_ERR(htoe_hex_octets("0:0", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "':' or '-' only between octets");
	ASSERT_ERR(htoe_hex_octets(":00", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "':' or '-' only between octets");
	ASSERT_ERR(htoe_hex_octets("00::11", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "':' or '-' only between octets");
	ASSERT_ERR(htoe_hex_octets("0011:", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "':' or '-' only between octets");
	ASSERT_ERR(htoe_hex_octets("", b, 1, 8, &n, err, sizeof(err)) < 0, "no hex digits");
	ASSERT_ERR(htoe_hex_octets("000102030405060708", b, 1, 8, &n, err, sizeof(err)) < 0,
		   "more than 16 hex digits");
	ASSERT_ERR(htoe_hex_octets("0001", b, 6, 6, &n, err, sizeof(err)) < 0,
		   "expected 12 hex digits, got 4");
	ASSERT_ERR(htoe_hex_octets("0001", b, 6, 8, &n, err, sizeof(err)) < 0,
		   "expected at least 12 hex digits, got 4");
}

/* a workload's operation mix: the bridge's [workload] mix and htoe-sim --mix */
static void test_op_mix(void **state)
{
	unsigned w[HT_OP__COUNT];

	(void)state;
	assert_int_equal(htoe_parse_mix("rd=35,wrp=25,wrn=10,fadd=10,cas=10,flush=5,fence=5", w, err,
					sizeof(err)), 0);
	assert_int_equal(w[HT_OP_READ], 35);
	assert_int_equal(w[HT_OP_WRITE_P], 25);
	assert_int_equal(w[HT_OP_WRITE_NP], 10);
	assert_int_equal(w[HT_OP_FETCH_ADD], 10);
	assert_int_equal(w[HT_OP_CAS], 10);
	assert_int_equal(w[HT_OP_FLUSH], 5);
	assert_int_equal(w[HT_OP_FENCE], 5);
	/* blanks around names and weights; the others 0 */
	assert_int_equal(htoe_parse_mix(" rd = 1 ,\twrp=0x10 ", w, err, sizeof(err)), 0);
	assert_int_equal(w[HT_OP_READ], 1);
	assert_int_equal(w[HT_OP_WRITE_P], 16);
	assert_int_equal(w[HT_OP_CAS], 0);
	ASSERT_ERR(htoe_parse_mix("rd", w, err, sizeof(err)) < 0, "'rd' is not OP=WEIGHT");
	ASSERT_ERR(htoe_parse_mix("read=1", w, err, sizeof(err)) < 0, "unknown operation 'read'");
	ASSERT_ERR(htoe_parse_mix("rd=-1", w, err, sizeof(err)) < 0, "weight of rd is not a number");
	ASSERT_ERR(htoe_parse_mix("rd=1000001", w, err, sizeof(err)) < 0,
		   "weight of rd is not a number 0..1000000");
	ASSERT_ERR(htoe_parse_mix("rd=0,wrp=0", w, err, sizeof(err)) < 0, "all weights are 0");
	ASSERT_ERR(htoe_parse_mix("", w, err, sizeof(err)) < 0, "all weights are 0");
}

static char *reference(enum cfg_ref_format fmt)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	cfg_reference(&br_cfg_schema, fmt, f);
	fclose(f);
	return buf;
}

static void test_reference(void **state)
{
	char *md = reference(CFG_REF_MD), *man = reference(CFG_REF_MAN);
	char want[128];

	(void)state;
	/* every key in both, with its type and range */
	for (unsigned i = 0; i < br_cfg_schema.n_keys; i++) {
		snprintf(want, sizeof(want), "| `%s%s` |", br_cfg_schema.keys[i].name,
			 br_cfg_schema.keys[i].flags & CFG_F_PREFIX ? "*" : "");
		if (!strstr(md, want))
			fail_msg("markdown lacks %s", want);
		snprintf(want, sizeof(want), "\\fB%s", br_cfg_schema.keys[i].name);
		if (!strstr(man, want))
			fail_msg("man page lacks %s", want);
	}
	assert_non_null(strstr(md, "| `mtu` | integer 112..9000 | `1500` |"));
	assert_non_null(strstr(md, "| `rto` | duration 1us..60s | `1ms` (library: `200us`) |"));
	assert_non_null(strstr(md, "| `flush` | 0.2 |"));
	assert_non_null(strstr(man, ".TH HTOE.INI 5"));
	assert_non_null(strstr(man, "\\fBflush\\fR (removed in 0.2)"));
	free(md);
	free(man);
}

static void test_split_args(void **state)
{
	static const char *const no_eal[] = { "--help", NULL };
	char *a1[] = { "prog", "-l", "0-1", "--", "--config", "x.ini", NULL };
	char *a2[] = { "prog", "--help", NULL };
	char *a3[] = { "prog", "-l", "0-1", NULL };
	char **av;
	int eal, n;

	(void)state;
	n = br_split_args(6, a1, no_eal, &eal, &av);
	assert_int_equal(n, 3);
	assert_int_equal(eal, 3);
	assert_string_equal(av[0], "prog");
	assert_string_equal(av[1], "--config");
	assert_string_equal(av[2], "x.ini");
	assert_null(av[3]);
	free(av);
	n = br_split_args(2, a2, no_eal, &eal, &av);
	assert_int_equal(n, 2);
	assert_int_equal(eal, 1);
	assert_string_equal(av[1], "--help");
	free(av);
	n = br_split_args(3, a3, no_eal, &eal, &av);
	assert_int_equal(n, 1);
	assert_int_equal(eal, 3);
	assert_null(av[1]);
	free(av);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_defaults_and_fallback),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_removed),
		cmocka_unit_test(test_syntax_and_duplicates),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_secret_never_printed),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_macsec_inline),
		cmocka_unit_test(test_macsec_key_file),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_op_mix),
		cmocka_unit_test(test_reference),
		cmocka_unit_test(test_split_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
