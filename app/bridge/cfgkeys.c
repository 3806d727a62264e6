/* SPDX-License-Identifier: BSD-3-Clause
 * The table of every section and key of the htoe-bridge configuration.
 * It drives parsing, range checks, messages, --set and the reference
 * (docs/config.md between its "config-reference" markers, htoe.ini(5),
 * --config-reference). No DPDK.
 *
 * Adding a key: a field in the struct of config.h, and one line here:
 *   K(sections, "name", type, min, max, "default", flags, OBJ, struct, field, syntax, "help")
 * for a key that fills that field (config.c applies it with cfg_apply), or
 *   X(sections, "name", type, min, max, "default", flags, syntax, "help")
 * for a key the code reads itself (cfg_get_typed / cfg_val). Then
 * `ninja -C build config-doc` regenerates docs/config.md.
 */
#include <stddef.h>
#include <string.h>

#include "config.h"

#define G  CFG_S(BR_S_GLOBAL)
#define B  CFG_S(BR_S_BRIDGE)
#define N  CFG_S(BR_S_NODE)
#define P  CFG_S(BR_S_PEER)
#define PO CFG_S(BR_S_PORT)
#define M  CFG_S(BR_S_MAP)
#define I  CFG_S(BR_S_IMPAIR)
#define W  CFG_S(BR_S_WORKLOAD)
#define MS CFG_S(BR_S_MACSEC)

#define K(...) K_(__VA_ARGS__) /* OBJ, struct come as one macro (GL, ND, ...) */
#define K_(S, name, type, min, max, def, flags, OBJ, st, field, syn, help) \
	{ S, name, type, min, max, def, flags, OBJ, offsetof(st, field), \
	  sizeof(((st *)0)->field), syn, help }
#define X(S, name, type, min, max, def, flags, syn, help) \
	{ S, name, type, min, max, def, flags, -1, CFG_NO_FIELD, 0, syn, help }

#define U64 UINT64_MAX
#define SEC 1000000000ull
#define MS_ 1000000ull
#define US_ 1000ull
#define DAY (86400ull * SEC)

#define GL BR_OBJ_GLOBAL, struct br_config
#define ND BR_OBJ_NODE, struct br_node_cfg
#define MB BR_OBJ_MEMBER, struct br_member_cfg
#define PT BR_OBJ_PORT, struct br_port_cfg
#define IM BR_OBJ_IMPAIR, struct impair_cfg
#define WL BR_OBJ_WL, struct br_wl_cfg

static const struct cfg_sect sects[BR_S__COUNT] = {
	[BR_S_GLOBAL] = { "global", true, false, NULL, "[global]",
		"Process-wide: stats, duration, capture, mbufs.", NULL },
	[BR_S_BRIDGE] = { "bridge", true, false, NULL, "[bridge] and [node N]",
		"`[bridge]` gives defaults for every `[node N]` of the file; a key in `[node N]` "
		"overrides it for that node. The library defaults (`htoe_config_defaults()`) apply "
		"where htoe-bridge has none of its own. Where htoe-bridge's default differs from the "
		"library's (marked \"library:\"), it is because its lcores may share CPUs with other "
		"processes (on the project's shared 2-vCPU VMs a poller was seen descheduled for up "
		"to 4 s) and a stalled poller must not look like a dead peer: a VL reset poisons the "
		"requests in flight and may lose posted writes, so the workload can no longer verify. "
		"A dead peer is therefore noticed only after about 9 s. On dedicated cores tighten "
		"them (e.g. `rto = 200us`, `rto_min = 50us`, `rto_max = 20ms`, `retry_limit = 8`, "
		"`stall_timeout = 50ms`, `np_timeout = 100ms`: the library's values). Which timer "
		"must exceed which stall is worked out in docs/architecture.md (Retry, \"Timers "
		"against stalled pollers\"); `htoe-sim --stall` (docs/simulator.md) checks a set of "
		"timers against stalls.",
		"When a `bufs_*` key is not given, each count is raised to `reserve × (members − 1) "
		"+ max(64, max_per_vl − reserve)` if that is larger, so that every VL can start and a "
		"busy VL reach `max_per_vl` however many idle peers are configured (as htoe-sim does). The library "
		"checks the complete bridge configuration (`htoe_config_check()`); what it refuses "
		"is reported against the key it names." },
	[BR_S_NODE] = { "node", false, true, "bridge", "[node N] only",
		"A node hosted by this process (node id N, 0..65535): its bridge, endpoint model and "
		"port. Every key of `[bridge]` may also be given here. Each `[node N]` and `[peer N]` "
		"is a member of the cluster: every node's peer table holds every other member (one "
		"virtual link each, at most 64). With `--node ID[,ID...]` only the listed `[node]` "
		"sections run here; the others act as `[peer]`s, so one file can describe a whole "
		"cluster (`config/cluster.ini`).", NULL },
	[BR_S_PEER] = { "peer", false, true, "bridge", "[peer N]",
		"A node of another process or host, reachable through a port. All keys optional; "
		"`mem_base` and `mem_size` (the memory it exports: a workload on it must stay "
		"inside) are given as in `[bridge]`, whose values are the defaults.",
		"Two members with one MAC are an error." },
	[BR_S_PORT] = { "port", false, true, NULL, "[port N]",
		"One ethdev port with one RX and one TX queue (N: any number, used by `port = N`). "
		"The data path does not care what it is.",
		"Every port must be used by a `[node]` (of this process, or of another with "
		"`--node`); the MTU and frame size of its node must fit the device." },
	[BR_S_MAP] = { "map", true, false, NULL, "[map]",
		"The address map of every node (lib/htoe/include/htoe/htoe_map.h): a global address is local, "
		"remote (node + address there) or unmapped. Required. Either ranges or a mask, not "
		"both.",
		"Map errors are reported by htoe_map with labels `FILE:[map] KEY` and the ranges in "
		"hex." },
	[BR_S_IMPAIR] = { "impair", true, true, "impair", "[impair] and [impair N]",
		"A seeded impairment stage per port (app/bridge/impair.c), applied in the app, never "
		"in lib/htoe. `[impair]` applies to every port, `[impair N]` overrides it key by key "
		"for port N. Nothing is impaired unless a probability, a delay or an outage is set. "
		"The model is htoe-sim's switch's (app/common/impair_model.c): per frame, a loss "
		"burst, an independent loss, a flipped bit, `delay` + 0..`jitter`, and with `reorder` "
		"a frame held back a further `reorder_delay` + 0..`reorder_delay` (a longer path "
		"through a switch fabric or a bonded link: the frames behind it overtake it); a "
		"duplicate leaves right after the original. "
		"A probability is written `0.1` or `10%`, as htoe-sim's options are; exactly one is "
		"written `100%`: a bare `1` is refused, as it is more often a mistaken `1%`.", NULL },
	[BR_S_WORKLOAD] = { "workload", true, true, "workload", "[workload] and [workload N]",
		"The verified workload (lib/htmodel/ht_workload.h) run by the requester of "
		"`[node N]`; a `[workload N]` section enables it, `[workload]` gives defaults for "
		"all. The workload keeps a shadow copy of the memory it uses and checks every read "
		"and atomic result against it; at the end a read-back sweep reads the whole window "
		"(checking the posted writes too), and when the target node runs in the same process "
		"its memory is compared with the shadow byte by byte.",
		"The shadow starts as the target's `mem_seed` pattern: the target must not have been "
		"written since it started, and two workloads must not share bytes of one target "
		"(checked for the workloads of this process)." },
	[BR_S_MACSEC] = { "macsec", true, true, "macsec", "[macsec] and [macsec N]",
		"IEEE 802.1AE MACsec protection of every HToE frame (app/bridge/macsec.c on "
		"lib/htoe/htoe_macsec; user guide: [macsec.md §8](macsec.md#8-using-macsec-in-htoe-"
		"bridge)). `[macsec]` applies to every `[node N]`, `[macsec N]` overrides it key by "
		"key for node N (there must be a `[node N]`). A section is node N's view of the "
		"connectivity association: its keys protect what it sends and validate what every "
		"peer sends; members whose views differ drop each other's frames. Any key without "
		"`enable = on` (in the section or in `[macsec]`) is an error: frames would go out in "
		"clear.",
		"Errors name the file and line (or `--set`), the section and the key; key values are "
		"never printed: `bridge.ini:12: [macsec 2] key: gcm-aes-256 needs a 32-octet key (64 "
		"hex digits), got 16 octets`, `bridge.ini:9: [macsec] key_file = 'k.txt': k.txt has "
		"mode 0644: readable or writable by group or others; a key file must be private "
		"(chmod 600 k.txt)`." },
};

static const struct cfg_key keys[] = {
	/* [global] */
	K(G, "stats_interval", CFG_DUR, 0, 3600 * SEC, "1s", 0, GL, stats_interval_ns, NULL,
	  "period of the one-line stats summary on stdout; `0`: none (the last line is printed "
	  "at the end anyway). `--stats SEC` overrides"),
	K(G, "duration", CFG_DUR, 0, 365 * DAY, "0", 0, GL, duration_ns, NULL,
	  "stop the workloads after this (they finish: no more random ops, the read-back sweep, "
	  "then drain); `0`: no limit. `--duration SEC` overrides"),
	K(G, "drain_timeout", CFG_DUR, MS_, 3600 * SEC, "10s", 0, GL, drain_timeout_ns, NULL,
	  "after a stop (duration, SIGINT/SIGTERM), quit anyway if not quiescent after this; the "
	  "run then counts as incomplete (exit 1)"),
	K(G, "peer_dead_timeout", CFG_DUR, 100 * MS_, 3600 * SEC, "5s", 0, GL, peer_dead_ns, NULL,
	  "in the drain (after `duration` or a signal) a peer that answered before and then "
	  "sends nothing for this long while the node still waits on it is gone: its memory is "
	  "counted lost (if the node's workload used it), its VL reset and the run ends without "
	  "waiting for `drain_timeout` "
	  "(bridge.md, `peers gone`). Make it longer than a live peer's poller may be "
	  "descheduled (up to 4 s seen on shared 2-vCPU VMs) and shorter than `drain_timeout`"),
	K(G, "lcore_pause", CFG_PROB, 0, 0, "0", 0, GL, lcore_pause, NULL,
	  "test hook: with this probability per poll iteration an lcore sleeps "
	  "1 µs..`lcore_pause_max` (a poller descheduled by a busy host), for robustness tests "
	  "of the retry and reset logic"),
	K(G, "lcore_pause_max", CFG_DUR, US_, 10 * SEC, "10ms", 0, GL, lcore_pause_max_ns, NULL,
	  "the longest such pause"),
	K(G, "lcore_pause_seed", CFG_UINT, 0, U64, "1", 0, GL, lcore_pause_seed, NULL,
	  "seed of the pauses (plus the lcore id)"),
	K(G, "exit_when_done", CFG_BOOL, 0, 0, "on", 0, GL, exit_when_done, NULL,
	  "quit when every local workload is done and its node's bridge is quiescent (nodes "
	  "without a workload only serve and never hold up the end). `off`: run until a signal "
	  "or `duration` (a node serving memory to other hosts); the stats line then ends in "
	  "`done N/N` (nodes done and quiescent) so you know when to stop it "
	  "([deploy-memif.md](deploy-memif.md))"),
	K(G, "poll", CFG_ENUM, 0, 0, "default", 0, GL, poll, "default|busy|adaptive",
	  "`busy`: every lcore polls its ports without pause (lowest latency, a whole CPU each). "
	  "`adaptive`: an lcore that has moved no frame and done no local work for 200 µs "
	  "pauses, then sleeps until its next deadline (`htoe_next_deadline()`, an impairment "
	  "release), at most a tenth of the time it has been idle (up to 5 ms) — or until an RX interrupt "
	  "where the PMD has one — and polls at full speed again from the first frame "
	  "([bridge.md](bridge.md#polling)). `default`: htoe-bridge `busy`, htoe-dimm "
	  "`adaptive`"),
	K(G, "capture", CFG_STR, 0, BR_PATH_MAX - 1, NULL, 0, GL, capture_dir, NULL,
	  "a directory: write `port<N>-tx.pcap` and `port<N>-rx.pcap` for every port (see "
	  "[bridge.md](bridge.md#capture)). `--capture DIR` overrides"),
	K(G, "capture_ring", CFG_UINT, 64, 1u << 20, "8192", 0, GL, capture_ring, NULL,
	  "capture copies queued per lcore before copies are lost"),
	K(G, "metrics", CFG_STR, 0, 63, NULL, 0, GL, metrics, NULL,
	  "`ADDR:PORT`: serve the counters (of htoe-bridge or htoe-dimm) at "
	  "`http://ADDR:PORT/metrics` in the Prometheus text "
	  "format, from an HTTP thread of its own (libmicrohttpd), never a polling lcore. ADDR "
	  "is an IPv4 address, `[IPv6]` or `*` (every address), e.g. `127.0.0.1:9478`; an "
	  "address that cannot be served (a port in use) is refused at start "
	  "([deploy-vm.md](deploy-vm.md#metrics))"),
	K(G, "mbufs", CFG_UINT, 0, 1u << 24, "0", 0, GL, mbufs, NULL,
	  "size of the mbuf pool, at least 1024; `0`: computed from the ports' descriptors, "
	  "rings and impairment queues (at least 8191)"),
	K(G, "burst", CFG_UINT, 1, 64, "32", 0, GL, burst, NULL, "RX burst and TX buffer size"),
	K(G, "tx_drain", CFG_DUR, US_, 100 * MS_, "100us", 0, GL, tx_drain_ns, NULL,
	  "the TSC drain timer: the longest a frame waits in a TX buffer"),

	/* [node N] only */
	X(N, "port", CFG_UINT, 0, 65535, NULL, CFG_F_REQUIRED, NULL,
	  "the `[port N]` this node sends and receives on (one node per port)"),
	X(N, "lcore", CFG_UINT, 0, 1023, "(assigned)", 0, NULL,
	  "the lcore that polls this node; default: round-robin over the worker lcores when "
	  "there are more lcores than nodes, else over all lcores starting with the main one"),
	/* [node N] and [peer N] */
	K(N | P, "mac", CFG_MAC, 0, 0, "(02:48:54:00:hi:lo, hi:lo the node id)", 0, MB, mac,
	  NULL, "the member's MAC; frames are sent from a node's MAC and to the peers' MACs"),
	X(N | P, "pcp", CFG_UINT, 0, 7, "(the sender's default_pcp)", 0, NULL,
	  "802.1Q priority of frames *to* this member"),
	X(N | P, "mem_seed", CFG_UINT, 0, U64, "(node id)", 0, NULL,
	  "the pattern `ht_wl_fill(mem_seed)` the exported memory starts with (workloads on it "
	  "assume it)"),
	/* [bridge], [node N], [peer N] */
	K(B | N | P, "mem_base", CFG_SIZE, 0, U64, "0x100000", 0, MB, mem_base, NULL,
	  "local HT address of the memory this node exports"),
	K(B | N | P, "mem_size", CFG_SIZE, 64, 1ull << 32, "64K", CFG_F_ALIGN64 | CFG_F_MEM, MB,
	  mem_size, NULL, "its size (allocated by the node that exports it)"),
	/* [bridge] and [node N]: struct htoe_config */
	K(B | N, "mtu", CFG_UINT, HTOE_HDR_LEN + HT_MAX_PKT_LEN, HTOE_MTU_MAX, NULL, 0, ND, bc.mtu,
	  NULL, "HToE header + payload per frame; frames are mtu + 14 (+4 with VLAN) bytes. With "
	  "MACsec on the frames stay that size: the HToE payload shrinks by 32 (SecTAG + ICV), "
	  "and `mtu` must be ≥ 144"),
	K(B | N, "vlan", CFG_BOOL, 0, 0, NULL, 0, ND, bc.vlan, NULL, "send 802.1Q-tagged frames"),
	K(B | N, "vid", CFG_UINT, 0, 4095, NULL, 0, ND, bc.vid, NULL, "VLAN id"),
	K(B | N, "default_pcp", CFG_UINT, 0, 7, NULL, 0, ND, bc.default_pcp, NULL,
	  "PCP of the VLs whose peer sets no `pcp`"),
	K(B | N, "epoch", CFG_UINT, 0, 255, NULL, 0, ND, bc.epoch, NULL,
	  "initial VL epoch (e.g. a boot counter)"),
	K(B | N, "unitid_base", CFG_UINT, 0, 30, NULL, 0, ND, bc.unitid_base, NULL,
	  "first UnitID of the bridge's own tag space (remote requests)"),
	K(B | N, "bridge_unitids", CFG_UINT, 1, 8, "4", 0, ND, bc.n_unitids, NULL,
	  "UnitIDs of the bridge: 32 pending remote requests each; one more UnitID "
	  "(`unitid_base + bridge_unitids`) is used for Flush, two with more than 32 peers; "
	  "all must be ≤ 31"),
	K(B | N, "requester_unitids", CFG_UINT, 1, HT_REQ_MAX_UNITIDS, "4", 0, ND, req_unitids,
	  NULL, "the local requester's UnitIDs 1..N (32 tags each); must stay below "
	  "`unitid_base`"),
	X(B | N, "bufs_posted", CFG_TEXT, 0, 0, "(256/256, see below)", 0,
	  "`CMD/DATA` or one number for both, 1..4096",
	  "receive buffers of the posted VC"),
	X(B | N, "bufs_nonposted", CFG_TEXT, 0, 0, "(256/256, see below)", 0,
	  "`CMD/DATA` or one number for both, 1..4096", "the same, non-posted VC"),
	X(B | N, "bufs_response", CFG_TEXT, 0, 0, "(256/256, see below)", 0,
	  "`CMD/DATA` or one number for both, 1..4096", "the same, response VC"),
	K(B | N, "reserve", CFG_UINT, 1, 4096, NULL, 0, ND, bc.reserve, NULL,
	  "buffers guaranteed to each VL per class"),
	K(B | N, "max_per_vl", CFG_UINT, 1, 4096, NULL, 0, ND, bc.max_per_vl, NULL,
	  "cap per VL per class; below it, the buffers beyond the reserves are shared in "
	  "equal parts among the VLs that are sending in that class (docs/architecture.md "
	  "\"Virtual links and credits\")"),
	K(B | N, "txq_pkts", CFG_UINT, 2, 65535, NULL, 0, ND, bc.txq_pkts, NULL,
	  "HT packets queued per VL per VC (including unacknowledged ones)"),
	K(B | N, "retry", CFG_ENUM, 0, 0, "selective", 0, ND, bc.retry_mode, "gbn|selective",
	  "`selective`: offer selective retry (SACK) in the reset handshake and use it on every VL "
	  "whose peer offers it too; `gbn`: the paper's Go-Back-N only. Selective resends about "
	  "one frame per frame lost, Go-Back-N 5–18 (docs/benchmarks.md, docs/wire-format.md "
	  "\"Selective retry\")"),
	K(B | N, "window", CFG_UINT, 2, 4096, NULL, 0, ND, bc.window, NULL,
	  "retry window: unacknowledged frames per VL; in selective mode also how far ahead of "
	  "the expected frame a receiver holds frames (rounded up to a power of two)"),
	K(B | N, "ack_every", CFG_UINT, 1, 4096, NULL, 0, ND, bc.ack_every, NULL,
	  "a standalone ack after this many frames"),
	K(B | N, "ack_delay", CFG_DUR, 0, 10 * SEC, NULL, 0, ND, bc.ack_delay_ns, NULL,
	  "... or after this long"),
	K(B | N, "rto", CFG_DUR, US_, 60 * SEC, "1ms", 0, ND, bc.rto_init_ns, NULL,
	  "initial retransmission timeout (doubles on every timeout). A burst of 32 full frames "
	  "through the software endpoint model takes more than 200 µs on a slow core: with "
	  "200 µs half the demo's frames were spurious retransmissions"),
	K(B | N, "rto_min", CFG_DUR, US_, 60 * SEC, "1ms", 0, ND, bc.rto_min_ns, NULL,
	  "floor of the adaptive RTO: after the first acknowledged frame each VL's RTO is "
	  "SRTT + 4·RTTVAR (RFC 6298, measured from acks; `/htoe/vl` and `--json` show "
	  "`srtt_ns`, `rttvar_ns`, `rto_ns`), clamped to [`rto_min`, `rto_max`]. On a shared "
	  "CPU a descheduled poller stretches single round trips far beyond the smoothed RTT "
	  "of a quiet link, so the floor stays well above it: the lossless demo on a 2-vCPU VM "
	  "made 835 spurious retransmissions in 2 s with 200us and 9 with 1ms"),
	K(B | N, "rto_max", CFG_DUR, US_, 600 * SEC, "200ms", 0, ND, bc.rto_max_ns, NULL,
	  "its ceiling"),
	K(B | N, "retry_limit", CFG_UINT, 1, 1000000, "50", 0, ND, bc.retry_limit, NULL,
	  "consecutive timeouts before the VL is reset (with the defaults: about 9 s without "
	  "any acknowledgement)"),
	K(B | N, "np_timeout", CFG_DUR, US_, 3600 * SEC, "30s", 0, ND, bc.np_timeout_ns, NULL,
	  "a local non-posted request older than this is answered with an error"),
	K(B | N, "stall_timeout", CFG_DUR, US_, 3600 * SEC, "10s", 0, ND, bc.stall_timeout_ns,
	  NULL, "a VL refusing local input this long is reset"),

	/* [port N] */
	K(PO, "dev", CFG_STR, 0, BR_DEV_MAX - 1, NULL, 0, PT, dev, NULL,
	  "a port by name if the EAL already created it (`-a 0000:03:00.0`, `--vdev "
	  "net_pcap0,...`), else devargs hot-plugged with `rte_dev_probe()`: "
	  "`net_null0,size=64`, `net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap`, "
	  "`net_af_packet0,iface=eth1`, `net_af_xdp0,iface=eth1` ([deploy-af-xdp.md](deploy-af-xdp.md)), "
	  "`net_memif0,role=server,...`"),
	X(PO, "crossover", CFG_UINT, 0, 65535, NULL, 0, NULL,
	  "`M`: this port and `[port M]` are the two ends of an in-process ring pair (two "
	  "rte_rings, `rte_eth_from_rings()` twice); `[port M]` must say `crossover = N`, "
	  "unless it is a hub (`hub = on`): then this port is joined to it. "
	  "Exactly one of `dev`, `crossover` and `hub`"),
	K(PO, "hub", CFG_BOOL, 0, 0, "off", 0, PT, hub, NULL,
	  "`on`: an in-process software switch for several nodes of this process: every port "
	  "that says `crossover = N` sends into this port (one multi-producer ring); a frame this "
	  "port's node sends, or one joined port's node sends to another's, goes to the port of "
	  "the node whose MAC is its destination (a frame the hub's node sends to no such node is "
	  "dropped and counted as `eth tx refused`). The ports joined to a hub need not be "
	  "mutual; used by htoe-bench's incast scenario"),
	K(PO, "ring_size", CFG_UINT, 64, 65536, "1024", CFG_F_POW2, PT, ring_size, NULL,
	  "entries of each crossover or hub ring"),
	K(PO, "rxd", CFG_UINT, 32, 16384, "1024", 0, PT, rxd, NULL,
	  "RX descriptors (clamped by the device)"),
	K(PO, "txd", CFG_UINT, 32, 16384, "1024", 0, PT, txd, NULL,
	  "TX descriptors (clamped by the device)"),
	K(PO, "connect_timeout", CFG_DUR, 100 * MS_, DAY, "10s", 0, PT, connect_timeout_ns, NULL,
	  "a memif client (`role=client`) whose server does not accept the connection (not "
	  "started yet, or still closing a previous client's) tries again every 100 ms for this "
	  "long, then exits with status 3"),
	K(PO, "promisc", CFG_BOOL, 0, 0, "on", 0, PT, promisc, NULL,
	  "promiscuous mode (the nodes' MACs are not the port's); ignored where unsupported"),
	K(PO, "capture", CFG_BOOL, 0, 0, "on", 0, PT, capture, NULL,
	  "capture this port when a capture directory is set"),

	/* [map] */
	X(M, "range", CFG_TEXT, 0, 0, NULL, CFG_F_PREFIX, "`BASE SIZE NODE [REMOTE_BASE]`",
	  "any key starting with `range` (`range1`, `range_node2`, ...): global `[BASE, "
	  "BASE+SIZE)` is node NODE's memory from address REMOTE_BASE (default: that node's "
	  "`mem_base`). At most 256. Overlaps, the reserved HT window "
	  "(0xFD_0000_0000..0xFF_FFFF_FFFF), unknown nodes are errors"),
	X(M, "mask", CFG_SIZE, 1, U64, NULL, 0, NULL,
	  "mask/shift mode: node = (gaddr & mask) >> shift; contiguous, at most 16 bits"),
	X(M, "shift", CFG_UINT, 0, 63, "(the lowest set bit of mask)", 0, NULL,
	  "the node bits' shift (the lowest set bit of `mask`, which it must be)"),
	X(M, "remote_base", CFG_SIZE, 0, U64, "([bridge] mem_base, else 0x100000)", 0, NULL,
	  "address at the node = (gaddr & ~mask) + remote_base"),

	/* [impair] and [impair N] */
	K(I, "direction", CFG_ENUM, 0, 0, "tx", 0, PT, direction, "tx|rx|both",
	  "`tx` (frames leaving the port), `rx` (arriving), `both`"),
	X(I, "seed", CFG_UINT, 0, U64, "(1 + N)", 0, NULL,
	  "PRNG seed; same seed, same decisions"),
	K(I, "loss", CFG_PROB, 0, 0, "0", 0, IM, loss, NULL, "independent loss probability"),
	K(I, "burst_loss", CFG_PROB, 0, 0, "0", 0, IM, burst_loss, NULL,
	  "probability that a loss burst starts"),
	K(I, "burst_len", CFG_REAL, 1, 1000000000, "4", 0, IM, burst_len,
	  "a mean burst length in frames", "mean burst length in frames"),
	K(I, "burst_us", CFG_UINT, 0, 60000000, "0", 0, IM, burst_us, NULL,
	  "a burst lasts this many microseconds instead of `burst_len` frames, dropping every "
	  "frame meanwhile (a switch that drops everything for a while; `0`: bursts in frames)"),
	K(I, "reorder", CFG_PROB, 0, 0, "0", 0, IM, reorder, NULL,
	  "probability a frame is held back so that later frames overtake it"),
	K(I, "reorder_delay", CFG_DUR, 0, 10 * SEC, "50us", 0, IM, reorder_ns, NULL,
	  "how long: `reorder_delay` + 0..`reorder_delay`"),
	K(I, "dup", CFG_PROB, 0, 0, "0", 0, IM, dup, NULL,
	  "probability a frame is delivered twice"),
	K(I, "corrupt", CFG_PROB, 0, 0, "0", 0, IM, corrupt, NULL,
	  "probability one random bit of the frame is flipped"),
	K(I, "delay", CFG_DUR, 0, 10 * SEC, "0", 0, IM, delay_ns, NULL, "added to every frame"),
	K(I, "jitter", CFG_DUR, 0, 10 * SEC, "0", 0, IM, jitter_ns, NULL,
	  "uniform extra delay 0..jitter"),
	K(I, "queue", CFG_UINT, 16, 1u << 20, "4096", 0, IM, queue, NULL,
	  "frames held at most (delay, reordering); when full a frame goes at once (counted)"),
	K(I, "outage_start", CFG_DUR, 0, 3600 * SEC, "0", 0, IM, outage_start_ns, NULL,
	  "start of the outage window, after the first frame this stage sees"),
	K(I, "outage_len", CFG_DUR, 0, 3600 * SEC, "0", 0, IM, outage_len_ns, NULL,
	  "outage (`0`: none): every frame from `outage_start` to `outage_start + outage_len` "
	  "is dropped (counted as dropped); with short timers (`rto`, `retry_limit`, "
	  "`np_timeout`) it makes VL resets and poisoned requests (scripts/gen-pcaps.sh, "
	  "`reset.pcap`)"),

	/* [workload] and [workload N] */
	X(W, "target", CFG_UINT, 0, 65535, NULL, CFG_F_REQUIRED, NULL,
	  "the node whose memory it uses (a `[node]` or `[peer]`; itself is allowed: loopback "
	  "through the bridge)"),
	X(W, "base", CFG_SIZE, 0, U64, "(the target's mem_base, as a global address through "
	  "[map])", CFG_F_ALIGN64, NULL, "window start (global)"),
	X(W, "size", CFG_SIZE, 64, 1ull << 32, "(the target's mem_size)",
	  CFG_F_ALIGN64 | CFG_F_MEM, NULL,
	  "window size; the window must map to the target as a whole and lie inside its memory"),
	X(W, "ops", CFG_UINT, 0, U64 / 4, "100000", 0, NULL,
	  "random operations (unlimited with `duration`); `--transactions N` sets them to N "
	  "split over the workloads"),
	K(W, "duration", CFG_DUR, 0, 365 * DAY, "0", 0, WL, duration_ns, NULL,
	  "stop generating random ops after this (the sweep follows)"),
	X(W, "mix", CFG_TEXT, 0, 0, "(rd=35,wrp=25,wrn=10,fadd=10,cas=10,flush=5,fence=5)", 0,
	  "`OP=WEIGHT,...`",
	  "op weights: rd, wrp (posted write), wrn (non-posted write), fadd, cas, flush, fence; "
	  "weights 0..1000000, the others 0"),
	K(W, "byte_pct", CFG_UINT, 0, 100, NULL, 0, WL, byte_pct, NULL,
	  "% of reads/writes in the byte forms (sizes: dword forms up to 64 bytes, byte forms "
	  "1..32)"),
	K(W, "window", CFG_UINT, 1, HT_WL_MAX_INFLIGHT, "128", 0, WL, window, NULL,
	  "non-posted operations in flight"),
	K(W, "sweep", CFG_BOOL, 0, 0, NULL, 0, WL, sweep, NULL,
	  "the final read-back of the whole window"),
	X(W, "seed", CFG_UINT, 0, U64, "(1000 + N)", 0, NULL, "the op sequence's seed"),
	X(W, "sizes", CFG_TEXT, 0, 0, "random", 0, "`random` or 4..64, a multiple of 4",
	  "`random`, or a fixed HT payload size for every read and write (dword forms, at the "
	  "start of a 64-byte block; `byte_pct` is then ignored). htoe-bench uses `sizes = 64` "
	  "with `mix = wrp=100` for its throughput runs and `sizes = 8` with `mix = rd=100`, "
	  "`window = 1` for its round trips"),
	K(W, "mode", CFG_ENUM, 0, 0, "verify", 0, WL, mode, "verify|inject",
	  "`verify`: the workload model above; `inject`: no model in the loop, 64-byte posted "
	  "writes encoded once at start cycle over the window in address order (two alternating "
	  "patterns; `mix`, `sizes`, `window`, `sweep` ignored), and the target's memory is "
	  "checked once at the end against the last value written to each address (app/node/"
	  "inject.h; htoe-bench's `write64_bridge`)"),

	/* [macsec] and [macsec N]: parsed by macsec_cfg.c (br_macsec_parse) */
	X(MS, "enable", CFG_BOOL, 0, 0, "off", 0, NULL,
	  "`on`: protect every frame sent, validate every frame received (Strict: nothing else "
	  "reaches the bridge). Off when there is no `[macsec]` section"),
	X(MS, "cipher", CFG_ENUM, 0, 0, "gcm-aes-128", 0,
	  "gcm-aes-128|gcm-aes-256|gcm-aes-xpn-128|gcm-aes-xpn-256", "the cipher suite"),
	X(MS, "mode", CFG_ENUM, 0, 0, "encrypt", 0, "encrypt|integrity",
	  "`encrypt` (E=C=1) or `integrity` (E=C=0: authenticated, in clear)"),
	X(MS, "backend", CFG_ENUM, 0, 0, "auto", 0, "auto|openssl|ipsec-mb",
	  "`auto` (intel-ipsec-mb if built and usable, else OpenSSL), `openssl`, `ipsec-mb`"),
	X(MS, "key", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex",
	  "the SAK of AN 0: 32 hex digits (-128 suites) or 64 (-256); same as `key0`"),
	X(MS, "key0", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex",
	  "the SAK of AN 0; every configured AN is installed at start for TX and for every "
	  "peer's RX"),
	X(MS, "key1", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex", "the SAK of AN 1"),
	X(MS, "key2", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex", "the SAK of AN 2"),
	X(MS, "key3", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex", "the SAK of AN 3"),
	X(MS, "keys", CFG_ENUM, 0, 0, "shared", 0, "shared|pairwise",
	  "`shared`: one SAK per AN for every node (`key`, `key0`..`key3`); `pairwise`: one SAK "
	  "per ordered pair of nodes and AN, from `master_key` or from `keyN A>B` lines of "
	  "`key_file` (docs/macsec.md §9)"),
	X(MS, "master_key", CFG_TEXT, 0, 0, NULL, CFG_F_SECRET, "hex",
	  "`keys = pairwise` only: 32 or 64 hex digits; every SAK of the node's pairs is derived "
	  "from it with the IEEE 802.1X-2010 KDF at start. Every holder of it can derive every "
	  "pair's SAK: against a dishonest member give each node its own `key_file` "
	  "(`htoe-pcap macsec-keys`) instead"),
	X(MS, "key_file", CFG_STR, 0, CFG_VALUE_MAX - 1, NULL, 0, NULL,
	  "instead of inline keys: a file of `keyN = HEX` lines (`key` = `key0`), bare `HEX` "
	  "lines (next free AN) and `salt = HEX`; with `keys = pairwise` `keyN A>B = HEX` lines "
	  "(the SAK node A sends to node B with on AN N; lines without this node are skipped) or "
	  "`master_key = HEX`; `#`/`;` comments. Refused when group or others may read or write "
	  "it (the error names the file and its mode). Relative paths from the current directory"),
	X(MS, "an", CFG_UINT, 0, 3, "0", 0, NULL,
	  "the AN the node starts sending on (needs its key)"),
	X(MS, "rekey_after", CFG_UINT, 0, U64, "0", 0, NULL,
	  "after this many frames on the current TX SA (`0`: never), send on the next "
	  "configured AN (needs ≥ 2 keys); receivers accept every configured AN, so nothing is "
	  "lost"),
	X(MS, "include_sci", CFG_BOOL, 0, 0, "on", 0, NULL,
	  "`on`: SCI in every SecTAG (SC=1, +8 octets); `off`: ES form, SCI = MAC ‖ 0001"),
	X(MS, "sci_port", CFG_UINT, 1, 65535, "1", 0, NULL,
	  "the port half of the node's SCI (MAC ‖ port), and the one it expects of its peers; "
	  "must be 1 without `include_sci`"),
	X(MS, "replay_window", CFG_UINT, 0, 0xffffffffull, "0", 0, NULL,
	  "802.1AE replay window (0: strictly increasing PNs; ≤ 2³⁰ with XPN)"),
	X(MS, "pn", CFG_UINT, 1, U64, "1", 0, NULL,
	  "first PN of the first TX SA (to continue after a restart under the same key; max "
	  "0xFFFFFFFF, XPN 2⁶⁴−1)"),
	X(MS, "salt", CFG_TEXT, 0, 0, "(all zeros)", 0, "24 hex digits",
	  "XPN only: the 12-octet salt of the CA. The SSCI is the sender's node id"),
};

static const struct cfg_removed removed[] = {
	{ B | N, "flush", "0.2",
	  "htoe-bridge sends every frame in the poll that filled it, so the library's flush "
	  "timer never ran; delete the line (tx_drain in [global] bounds the TX buffer)" },
};

static void obj_defaults(int obj, void *base)
{
	if (obj == BR_OBJ_NODE)
		htoe_config_defaults(&((struct br_node_cfg *)base)->bc);
	else if (obj == BR_OBJ_IMPAIR)
		impair_cfg_default(base);
	else if (obj == BR_OBJ_WL) {
		struct br_wl_cfg *w = base;
		struct ht_wl_cfg d;

		ht_wl_cfg_default(&d);
		w->byte_pct = d.byte_pct;
		w->sweep = d.sweep;
	}
}

#define MAX2(a, b) ((a) > (b) ? (a) : (b))

const struct cfg_schema br_cfg_schema = {
	sects, BR_S__COUNT, keys, sizeof(keys) / sizeof(keys[0]), removed,
	sizeof(removed) / sizeof(removed[0]), obj_defaults,
	MAX2(MAX2(MAX2(sizeof(struct br_config), sizeof(struct br_node_cfg)),
		  MAX2(sizeof(struct br_member_cfg), sizeof(struct br_port_cfg))),
	     MAX2(sizeof(struct impair_cfg), sizeof(struct br_wl_cfg))),
};
