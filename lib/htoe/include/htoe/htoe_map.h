/* SPDX-License-Identifier: BSD-3-Clause
 * HToE mapping layer (paper §3.1, §4.2): a 64-bit global address is LOCAL,
 * REMOTE (destination node + the address at that node) or UNMAPPED; a node id
 * has an Ethernet MAC address.
 *
 * Two modes, chosen by what is added:
 *  - range mode: entries (base, size, node, remote_base, label); an access
 *    [gaddr, gaddr+len) must lie inside one entry; the address at the node is
 *    gaddr - base + remote_base. Lookup is a binary search over the entries,
 *    sorted by htoe_map_finalize().
 *  - mask/shift mode: node = (gaddr & mask) >> shift, the address at the node
 *    is (gaddr & ~mask) + remote_base; mask is contiguous, shift is its
 *    lowest set bit, at most 16 bits wide (node ids are 16 bits). Only known
 *    nodes (the local node and the peer table) map.
 * An entry (or mask window) whose node is the local node gives LOCAL, with the
 * translated local address.
 *
 * Peers: (node id, optional MAC, label). A peer without a MAC gets the
 * locally administered 02:48:54:00:hi:lo (node id big-endian,
 * htoe_map_node_mac()). The peer table may list the local node itself (one
 * cluster-wide file).
 *
 * Use: htoe_map_init(); add peers, ranges or a mask (in any order);
 * htoe_map_finalize(); then htoe_map_lookup() / htoe_map_mac().
 * Every add/finalize error returns a negative enum htoe_map_err and writes a
 * message naming the entries involved (by the caller's labels, e.g.
 * "bridge.ini:14 [map] range3") and their ranges in hex into err[0..errlen).
 *
 * Sans-I/O: all storage is inside struct htoe_map (fixed maxima); nothing is
 * allocated. The struct is large (~100 KiB): allocate it once, not on a small
 * stack.
 */
#ifndef HTOE_MAP_H
#define HTOE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTOE_MAP_MAX_RANGES 256u
#define HTOE_MAP_MAX_PEERS  1024u
#define HTOE_MAP_LABEL_MAX  64u   /* incl. the NUL; longer labels are cut */

/* The reserved HT window (reference §14) the global window must stay out of. */
#define HTOE_HT_RESERVED_BASE 0xFD00000000ull
#define HTOE_HT_RESERVED_LAST 0xFFFFFFFFFFull

enum htoe_map_kind {
	HTOE_MAP_UNMAPPED = 0,
	HTOE_MAP_LOCAL,
	HTOE_MAP_REMOTE,
};

enum htoe_map_err {
	HTOE_MAP_OK = 0,
	HTOE_MAP_E_FULL = -1,         /* too many ranges or peers */
	HTOE_MAP_E_SIZE = -2,         /* range of size 0 */
	HTOE_MAP_E_OVERFLOW = -3,     /* base+size or remote_base+size > 2^64 */
	HTOE_MAP_E_RESERVED = -4,     /* overlaps the reserved HT window */
	HTOE_MAP_E_OVERLAP = -5,      /* two ranges overlap */
	HTOE_MAP_E_MASK = -6,         /* mask not contiguous / bad shift / too wide */
	HTOE_MAP_E_UNKNOWN_NODE = -7, /* a range names a node that is not known */
	HTOE_MAP_E_DUP_NODE = -8,     /* two peers with one node id */
	HTOE_MAP_E_DUP_MAC = -9,      /* two peers with one MAC */
	HTOE_MAP_E_MODE = -10,        /* ranges and a mask mixed, two masks, no mapping */
	HTOE_MAP_E_STATE = -11,       /* add after finalize, lookup before */
	HTOE_MAP_E_INVAL = -12,       /* bad argument (bad MAC: multicast or zero) */
};
const char *htoe_map_strerror(int err);
const char *htoe_map_kind_name(enum htoe_map_kind k); /* "unmapped", "local", "remote" */

struct htoe_map_range {
	uint64_t base;         /* global address of the first byte */
	uint64_t size;         /* bytes, > 0 */
	uint64_t remote_base;  /* address at `node` of the first byte */
	uint16_t node;
	int16_t  peer;         /* node's index in the peer table, -1 for the local
	                        * node (set by htoe_map_finalize: one lookup at
	                        * set-up, none per packet) */
	char     label[HTOE_MAP_LABEL_MAX];
};

struct htoe_map_peer {
	uint16_t node;
	bool     has_mac;      /* false: the default 02:48:54:00:hi:lo */
	uint8_t  mac[6];       /* the effective MAC (explicit or default) */
	char     label[HTOE_MAP_LABEL_MAX];
};

struct htoe_map_result {
	enum htoe_map_kind kind;
	uint16_t node;         /* LOCAL: the local node; REMOTE: the destination */
	uint64_t addr;         /* the address at that node */
	int      range;        /* index of the range used (range mode), else -1 */
	int      peer;         /* REMOTE: index of the peer (htoe_map_peer()), else -1 */
};

struct htoe_map {
	uint16_t local_node;
	bool     finalized;
	bool     mask_mode;
	/* mask mode */
	uint64_t mask;
	unsigned shift;
	uint64_t mask_remote_base;
	char     mask_label[HTOE_MAP_LABEL_MAX];
	/* range mode, sorted by base after finalize */
	unsigned nranges;
	struct htoe_map_range ranges[HTOE_MAP_MAX_RANGES];
	/* peers, sorted by node after finalize */
	unsigned npeers;
	struct htoe_map_peer peers[HTOE_MAP_MAX_PEERS];
	/* after finalize: open-addressing index node -> peer (index + 1; 0:
	 * empty), so that htoe_map_peer_index() is O(1) on the data path */
	uint16_t peer_hash[2 * HTOE_MAP_MAX_PEERS];
};

void htoe_map_init(struct htoe_map *m, uint16_t local_node);

/* The MAC computed from a node id, used when the peer table gives none:
 * the locally administered unicast 02:48:54:00:hi:lo (node id big-endian). */
void htoe_map_node_mac(uint16_t node, uint8_t mac[6]);

/* mac may be NULL (default MAC). label may be NULL ("peer<i>"). */
int htoe_map_add_peer(struct htoe_map *m, uint16_t node, const uint8_t *mac,
		      const char *label, char *err, size_t errlen);

/* label may be NULL ("range<i>"). Checks size 0, overflow and the reserved
 * window here; overlaps and unknown nodes in htoe_map_finalize(). */
int htoe_map_add_range(struct htoe_map *m, uint64_t base, uint64_t size,
		       uint16_t node, uint64_t remote_base, const char *label,
		       char *err, size_t errlen);

/* Mask/shift mode. label may be NULL ("mask"). */
int htoe_map_set_mask(struct htoe_map *m, uint64_t mask, unsigned shift,
		      uint64_t remote_base, const char *label,
		      char *err, size_t errlen);

/* Sort and cross-check: overlapping ranges, unknown nodes, and in mask mode
 * known nodes whose window overlaps the reserved HT window. */
int htoe_map_finalize(struct htoe_map *m, char *err, size_t errlen);

/*
 * Map the access [gaddr, gaddr + len) (len 0 counts as 1). Fills *res (may be
 * NULL) and returns its kind. UNMAPPED if no entry contains the whole access
 * (including an access that straddles two entries or wraps past 2^64), if
 * the node is unknown, or if the map is not finalized.
 */
enum htoe_map_kind htoe_map_lookup(const struct htoe_map *m, uint64_t gaddr,
				   uint64_t len, struct htoe_map_result *res);
/* The same result, starting from the range *hint (range mode): O(1) when
 * the access falls in the same range as the previous one, a binary search
 * otherwise. *hint (any value at first) is updated to the range found. */
enum htoe_map_kind htoe_map_lookup_hint(const struct htoe_map *m, uint64_t gaddr,
					uint64_t len, struct htoe_map_result *res,
					unsigned *hint);

/* MAC of a known node: the peer table's, else htoe_map_node_mac(). Returns
 * 0, or HTOE_MAP_E_UNKNOWN_NODE (mac untouched). */
int htoe_map_mac(const struct htoe_map *m, uint16_t node, uint8_t mac[6]);

/* Peer table access (after finalize: sorted by node id). */
int htoe_map_peer_index(const struct htoe_map *m, uint16_t node); /* -1: none */
/* Index of the peer with this MAC, or -1. */
int htoe_map_peer_by_mac(const struct htoe_map *m, const uint8_t mac[6]);
static inline unsigned htoe_map_peer_count(const struct htoe_map *m) { return m->npeers; }
static inline const struct htoe_map_peer *htoe_map_peer(const struct htoe_map *m, unsigned i)
{
	return i < m->npeers ? &m->peers[i] : NULL;
}
/* Known = the local node or in the peer table. */
bool htoe_map_node_known(const struct htoe_map *m, uint16_t node);

#endif
