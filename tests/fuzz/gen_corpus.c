/* SPDX-License-Identifier: BSD-3-Clause
 * Writes the seed corpora of the fuzz targets:
 *   gen_corpus DIR   ->  DIR/fuzz_ht/<name>     one HT packet per file
 *                        DIR/fuzz_frame/<name>  one Ethernet frame per file
 * Every HT packet is checked with ht_decode() and every valid frame with
 * htoe_frame_parse(), so the seeds start on the accepting paths; a few
 * deliberately broken inputs seed the drop paths. The output is committed in
 * tests/fuzz/corpus/; rerun this only when the formats change.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "htoe/htoe_wire.h"
#include "htmodel/ht_packet.h"

struct pkt {
	const char *name;
	uint32_t dw[20];
	unsigned ndw;
};

/* dwords as numbers; serialized little-endian (link order) */
static const struct pkt pkts[] = {
	{ "nop", { 0x00000000 }, 1 },
	{ "nop_credits", { 0x05032500 }, 1 },
	{ "sync", { 0xFFFFFFFF }, 1 },
	{ "extfc4", { 0x00000037 }, 1 },
	{ "extfc8", { 0x00000077, 0x00000000 }, 2 },
	{ "flush", { 0x00040102 }, 1 },
	{ "fence", { 0x0000013C }, 1 },
	{ "broadcast", { 0x0000013A, 0xFDF80000 }, 2 },
	{ "tgtdone", { 0x00030133 }, 1 },
	{ "rdresp1", { 0x00034030, 0xCAFEF00D }, 2 },
	{ "rdresp16", { 0x03C34030, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 }, 17 },
	{ "rdsized_dw", { 0x43C30115, 0x00123456 }, 2 },
	{ "rdsized_byte", { 0x03C20111, 0x00000010 }, 2 },
	{ "wr_p_dw", { 0x0000012C, 0x00000010, 0xDEADBEEF }, 3 },
	{ "wr_p_dw4", { 0x00C0012D, 0x00000020, 1, 2, 3, 4 }, 6 },
	{ "wr_np_dw", { 0x0005010C, 0x00000010, 0x01020304 }, 3 },
	{ "wr_p_byte", { 0x00400128, 0x00000010, 0x0000000F, 0x11223344 }, 4 },
	{ "atomic_fa", { 0x0046013D, 0x00000020, 1, 0 }, 4 },
	{ "atomic_cas", { 0x00C7013D, 0x00000020, 5, 0, 6, 0 }, 6 },
	{ "pfx_wr_p", { 0x0000013E, 0x0000012C, 0x00000010, 0x11223344 }, 4 },
	{ "pfx_rdsized", { 0x0000FF3E, 0x43C30115, 0x00123456 }, 3 },
};

/* invalid on purpose */
static const struct pkt bad_pkts[] = {
	{ "bad_reserved_cmd", { 0x00000001 }, 1 },
	{ "bad_prefix_type", { 0x0000017E, 0x0000012C, 0x00000010, 0 }, 4 },
	{ "bad_sync", { 0xFEFFFF3F }, 1 },
	{ "bad_truncated", { 0x03C34030, 1, 2 }, 3 },
};

static const struct pkt *find(const char *name)
{
	for (size_t i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++)
		if (!strcmp(pkts[i].name, name))
			return &pkts[i];
	fprintf(stderr, "no packet %s\n", name);
	exit(1);
}

static size_t put(uint8_t *b, const struct pkt *p)
{
	for (unsigned i = 0; i < p->ndw; i++) {
		b[4 * i] = (uint8_t)p->dw[i];
		b[4 * i + 1] = (uint8_t)(p->dw[i] >> 8);
		b[4 * i + 2] = (uint8_t)(p->dw[i] >> 16);
		b[4 * i + 3] = (uint8_t)(p->dw[i] >> 24);
	}
	return 4 * p->ndw;
}

static const char *outdir;

static void write_file(const char *sub, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s/%s", outdir, sub, name);
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static unsigned nframes;

/* A frame: type, vc, VLAN, and the named packets (DATA) or raw payload. */
static void frame(const char *name, struct htoe_hdr h, const char *const *names,
		  const uint8_t *raw, size_t rawlen, int expect)
{
	static uint8_t b[HTOE_FRAME_MAX];
	int off = htoe_hdr_write(&h, b, sizeof(b));

	if (off < 0) {
		fprintf(stderr, "%s: hdr_write %d\n", name, off);
		exit(1);
	}
	size_t plen = 0;
	unsigned n = 0;

	for (; names && names[n]; n++)
		plen += put(b + off + plen, find(names[n]));
	if (raw) {
		memcpy(b + off + plen, raw, rawlen);
		plen += rawlen;
	}
	if (h.ftype == HTOE_FT_DATA && !h.npkts)
		htoe_frame_set_npkts(b, (size_t)off, n);
	int len = htoe_frame_seal(b, sizeof(b), (size_t)off - HTOE_HDR_LEN, plen);

	if (len < 0) {
		fprintf(stderr, "%s: seal %d\n", name, len);
		exit(1);
	}
	struct htoe_hdr d;
	int rc = htoe_frame_parse(b, (size_t)len, HTOE_MTU_MAX, &d, NULL);

	if (rc != expect) {
		fprintf(stderr, "%s: parse gives %s, expected %s\n", name,
			htoe_drop_name(rc), htoe_drop_name(expect));
		exit(1);
	}
	write_file("fuzz_frame", name, b, (size_t)len);
	nframes++;
}

static struct htoe_hdr hdr(uint8_t ftype, uint8_t vc, bool vlan)
{
	struct htoe_hdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.dst, (const uint8_t[6]){ 0x02, 0x48, 0x54, 0x00, 0x00, 0x02 }, 6);
	memcpy(h.src, (const uint8_t[6]){ 0x02, 0x48, 0x54, 0x00, 0x00, 0x01 }, 6);
	h.has_vlan = vlan;
	h.pcp = vlan ? 5 : 0;
	h.vid = vlan ? 100 : 0;
	h.ftype = ftype;
	h.vc = vc;
	h.epoch = 3;
	h.src_node = 1;
	h.dst_node = 2;
	h.seq = ftype == HTOE_FT_DATA ? 7 : 0;
	h.ack = 5;
	for (int i = 0; i < HTOE_CR__COUNT; i++)
		h.credit[i] = (uint16_t)(16 * (i + 1));
	return h;
}

#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })

int main(int argc, char **argv)
{
	char path[4096];
	uint8_t b[256];
	struct ht_pkt p;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	mkdir(outdir, 0777);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", outdir, i ? "fuzz_frame" : "fuzz_ht");
		if (mkdir(path, 0777) && errno != EEXIST) {
			perror(path);
			return 1;
		}
	}

	/* HT packets */
	unsigned nht = 0;

	for (size_t i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++) {
		size_t n = put(b, &pkts[i]);
		int r = ht_decode(b, n, &p);

		if (r != (int)n) {
			fprintf(stderr, "%s: ht_decode %d (%s)\n", pkts[i].name, r, ht_strerror(r));
			return 1;
		}
		write_file("fuzz_ht", pkts[i].name, b, n);
		/* with trailing bytes: decode must take only the packet */
		memset(b + n, 0xA5, 4);
		snprintf(path, sizeof(path), "%s_trailing", pkts[i].name);
		if (i % 4 == 0) {
			write_file("fuzz_ht", path, b, n + 4);
			nht++;
		}
		nht++;
	}
	for (size_t i = 0; i < sizeof(bad_pkts) / sizeof(bad_pkts[0]); i++) {
		size_t n = put(b, &bad_pkts[i]);

		if (ht_decode(b, n, &p) >= 0) {
			fprintf(stderr, "%s: decodes\n", bad_pkts[i].name);
			return 1;
		}
		write_file("fuzz_ht", bad_pkts[i].name, b, n);
		nht++;
	}

	/* frames: every type, with and without a tag */
	for (int v = 0; v < 2; v++) {
		char nm[64];
		struct htoe_hdr h;

#define NM(s) (snprintf(nm, sizeof(nm), "%s%s", (s), v ? "_vlan" : ""), nm)
		frame(NM("data_p_two"), hdr(HTOE_FT_DATA, 0, v), L("pfx_wr_p", "wr_p_dw"), NULL, 0, 0);
		frame(NM("ack"), hdr(HTOE_FT_ACK, 0, v), NULL, NULL, 0, 0);
		frame(NM("nak"), hdr(HTOE_FT_NAK, 0, v), NULL, NULL, 0, 0);
		h = hdr(HTOE_FT_RESET, 0, v);
		h.cold = true;
		frame(NM("reset_cold"), h, NULL, NULL, 0, 0);
		frame(NM("reset_warm"), hdr(HTOE_FT_RESET, 0, v), NULL, NULL, 0, 0);
		frame(NM("reset_ack"), hdr(HTOE_FT_RESET_ACK, 0, v), NULL, NULL, 0, 0);
		frame(NM("ctrl"), hdr(HTOE_FT_CTRL, 0, v), NULL, (const uint8_t *)"HTOECTRL", 8, 0);
#undef NM
	}
	frame("ctrl_empty", hdr(HTOE_FT_CTRL, 0, false), NULL, NULL, 0, 0);
	memset(b, 0x5A, 200);
	frame("ctrl_200", hdr(HTOE_FT_CTRL, 0, false), NULL, b, 200, 0);
	/* DATA frames of each VC */
	frame("data_p_one", hdr(HTOE_FT_DATA, 0, false), L("wr_p_dw"), NULL, 0, 0);
	frame("data_p_mix", hdr(HTOE_FT_DATA, 0, true),
	      L("wr_p_dw4", "fence", "broadcast", "wr_p_byte", "pfx_wr_p"), NULL, 0, 0);
	frame("data_np_flush", hdr(HTOE_FT_DATA, 1, false), L("flush"), NULL, 0, 0);
	frame("data_np_mix", hdr(HTOE_FT_DATA, 1, false),
	      L("rdsized_dw", "rdsized_byte", "wr_np_dw", "atomic_fa", "atomic_cas", "pfx_rdsized"),
	      NULL, 0, 0);
	frame("data_r_tgtdone", hdr(HTOE_FT_DATA, 2, false), L("tgtdone"), NULL, 0, 0);
	frame("data_r_mix", hdr(HTOE_FT_DATA, 2, true), L("rdresp16", "rdresp1", "tgtdone"),
	      NULL, 0, 0);
	{
		const char *many[41];

		for (int i = 0; i < 40; i++)
			many[i] = "rdresp16";
		many[40] = NULL;
		frame("data_r_many", hdr(HTOE_FT_DATA, 2, false), many, NULL, 0, 0);
	}
	/* broken on purpose */
	struct htoe_hdr h = hdr(HTOE_FT_DATA, 0, false);

	frame("bad_vc", hdr(HTOE_FT_DATA, 1, false), L("wr_p_dw"), NULL, 0, -HTOE_DROP_VC);
	frame("bad_nop_inside", hdr(HTOE_FT_DATA, 0, false), L("wr_p_dw", "nop", "wr_p_dw"),
	      NULL, 0, -HTOE_DROP_VC);
	h.npkts = 3;
	frame("bad_count", h, L("wr_p_dw", "wr_p_dw"), NULL, 0, -HTOE_DROP_COUNT);
	frame("bad_stray", hdr(HTOE_FT_DATA, 0, false), L("wr_p_dw"), (const uint8_t *)"xy", 2,
	      -HTOE_DROP_LENGTH);
	frame("bad_ht", hdr(HTOE_FT_DATA, 0, false), L("wr_p_dw"),
	      (const uint8_t *)"\x01\x00\x00\x00", 4, -HTOE_DROP_HT_MALFORMED);

	printf("%u HT packets, %u frames\n", nht, nframes);
	return 0;
}
