-- SPDX-License-Identifier: BSD-3-Clause
--
-- htoe.lua: Wireshark dissector for htoe ("HToE-like, experimental")
-- HyperTransport-over-Ethernet frames, EtherType 0x88B5.
--
-- The frame format is docs/wire-format.md; the HT packet fields and their
-- names are those of `htoe-ht decode` (docs/ht-model.md). Install and usage:
-- docs/wireshark.md. Tested by tests/test_dissector.sh against htoe-ht on the
-- pcap corpus in pcap/.
--
--   protocol "htoe": the 32-byte HToE header, filter fields htoe.*
--   protocol "ht":   one subtree per HT packet of the payload, fields ht.*
--
-- Registered in the "ethertype" dissector table, so it also runs beneath an
-- 802.1Q tag and beneath an integrity-only (E=0, C=0) MACsec SecTAG.
--
-- Written for Wireshark 4.0 (Lua 5.2); uses bit32.

-- Loaded twice (an installed plugin plus -X lua_script:, or two plugin directories)?
-- The first copy wins; say so instead of failing on the duplicate protocol name.
-- (Each script has its own globals, so ask for the registered dissector.)
local have_ok, have = pcall(Dissector.get, "htoe")
if have_ok and have ~= nil then
    report_failure(string.format("htoe.lua: an HToE dissector is already loaded (an installed "
        .. "plugin?); not loading %s", (debug.getinfo(1, "S").source:gsub("^@", ""))))
    return
end

local bit32 = bit32
if bit32 == nil then
    error("htoe.lua needs Lua 5.2's bit32 library")
end
local band, bor, bxor = bit32.band, bit32.bor, bit32.bxor
local rshift, lshift = bit32.rshift, bit32.lshift

local HTOE_ETHERTYPE = 0x88B5
local HDR_LEN = 32
local MTU_MAX = 9000

-- ------------------------------------------------------------------ names

local FT_DATA, FT_ACK, FT_NAK, FT_RESET, FT_RESET_ACK, FT_CTRL = 1, 2, 3, 4, 5, 6
local ftype_names = {
    [FT_DATA] = "DATA", [FT_ACK] = "ACK", [FT_NAK] = "NAK", [FT_RESET] = "RESET",
    [FT_RESET_ACK] = "RESET_ACK", [FT_CTRL] = "CTRL",
}
local vc_names = { [0] = "P", [1] = "NP", [2] = "R", [3] = "invalid" }
local vc_long = { [0] = "posted (P)", [1] = "non-posted (NP)", [2] = "response (R)",
                  [3] = "invalid (3)" }
local crc_status_names = { [0] = "Bad", [1] = "Good", [2] = "Unverified" }
local rsp_err_names = { [0] = "ok", [1] = "data error", [2] = "target abort",
                        [3] = "master abort" }

-- CTRL protocols and lease messages (lib/htoe/htoe_lease.h)
local LEASE_PROTO, LEASE_VERSION, LEASE_MSG_LEN = 0x4C, 1, 48
-- digest messages (lib/htoe/include/htoe/htoe_digest.h): the end-of-run memory cross-check
local DIGEST_PROTO, DIGEST_VERSION, DIGEST_MSG_LEN = 0x44, 1, 32
-- LEAVE (lib/htoe/include/htoe/htoe_wire.h): "this node stops", the bridge's own message
local LEAVE_PROTO, LEAVE_VERSION, LEAVE_MSG_LEN = 0x42, 1, 2
local ctrl_protos = { [LEASE_PROTO] = "lease", [DIGEST_PROTO] = "digest", [LEAVE_PROTO] = "leave" }
local digest_types = { [1] = "REQUEST", [2] = "ANSWER" }
local digest_status = { [0] = "ok", [1] = "range not in the exported memory",
                        [2] = "exports no memory", [3] = "no more ranges kept" }
local lease_types = { [1] = "REQUEST", [2] = "GRANT", [3] = "REFUSE", [4] = "RENEW",
                      [5] = "RENEW_ACK", [6] = "RELEASE", [7] = "RELEASE_ACK" }
local lease_status = { [0] = "ok", [1] = "no space", [2] = "too many leases",
                       [3] = "bad request", [4] = "unknown lease",
                       [5] = "node exports no memory", [6] = "over the lessee's quota",
                       [7] = "stale request (retired session or replay)" }

-- ---------------------------------------------------------------- protocols

local p_htoe = Proto("htoe", "HyperTransport over Ethernet (HToE-like, experimental)")
local p_ht = Proto("ht", "HyperTransport 3.1 packet")

-- htoe.* header fields
local hf = {
    version     = ProtoField.uint8("htoe.version", "Version", base.DEC, nil, 0xF0),
    type        = ProtoField.uint8("htoe.type", "Frame type", base.DEC, ftype_names, 0x0F),
    type_name   = ProtoField.string("htoe.type_name", "Frame type name"),
    flags       = ProtoField.uint8("htoe.flags", "Flags", base.HEX),
    flags_rsvd  = ProtoField.uint8("htoe.flags.reserved", "Reserved", base.HEX, nil, 0xE0),
    sack        = ProtoField.bool("htoe.flags.sack", "SACK", 8,
                                  { "set: selective retry (RESET/RESET_ACK: offered; ACK/NAK: SACK block)",
                                    "not set" }, 0x10),
    credit_req  = ProtoField.bool("htoe.flags.credit_req", "CREDIT_REQ", 8,
                                  { "set: peer asked for credit limits", "not set" }, 0x08),
    cold        = ProtoField.bool("htoe.flags.cold", "COLD", 8, { "cold reset", "not set" }, 0x04),
    vc          = ProtoField.uint8("htoe.flags.vc", "VC", base.DEC, vc_long, 0x03),
    vc_name     = ProtoField.string("htoe.vc", "VC name"),
    npkts       = ProtoField.uint8("htoe.npkts", "HT packets (npkts)", base.DEC),
    epoch       = ProtoField.uint8("htoe.epoch", "Epoch", base.DEC),
    src         = ProtoField.uint16("htoe.src", "Source node", base.DEC),
    dst         = ProtoField.uint16("htoe.dst", "Destination node", base.DEC),
    node        = ProtoField.uint16("htoe.node", "Source or destination node", base.DEC),
    seq         = ProtoField.uint16("htoe.seq", "Sequence number", base.DEC),
    nonce       = ProtoField.uint16("htoe.nonce", "Reset nonce", base.HEX),
    -- (docs/wire-format.md "Incarnations and nonces"): RESET/RESET_ACK payload, CTRL trailer
    incarnation = ProtoField.uint32("htoe.incarnation", "Incarnation of the sender", base.HEX),
    nonce64     = ProtoField.uint64("htoe.reset_nonce", "Reset nonce (64-bit)", base.HEX),
    ack         = ProtoField.uint16("htoe.ack", "Ack (next expected seq)", base.DEC),
    credits     = ProtoField.bytes("htoe.credits", "Credit limits"),
    p_cmd       = ProtoField.uint16("htoe.credit.p_cmd", "P cmd limit", base.DEC),
    p_data      = ProtoField.uint16("htoe.credit.p_data", "P data limit", base.DEC),
    np_cmd      = ProtoField.uint16("htoe.credit.np_cmd", "NP cmd limit", base.DEC),
    np_data     = ProtoField.uint16("htoe.credit.np_data", "NP data limit", base.DEC),
    r_cmd       = ProtoField.uint16("htoe.credit.r_cmd", "R cmd limit", base.DEC),
    r_data      = ProtoField.uint16("htoe.credit.r_data", "R data limit", base.DEC),
    payload_len = ProtoField.uint16("htoe.payload_len", "Payload length", base.DEC),
    reserved    = ProtoField.uint16("htoe.reserved", "Reserved", base.HEX),
    crc         = ProtoField.uint32("htoe.crc", "CRC32C", base.HEX),
    crc_status  = ProtoField.uint8("htoe.crc.status", "CRC32C status", base.DEC, crc_status_names),
    crc_calc    = ProtoField.uint32("htoe.crc.computed", "CRC32C computed", base.HEX),
    payload     = ProtoField.bytes("htoe.payload", "Payload"),
    sack_blk    = ProtoField.bytes("htoe.sack", "SACK block"),
    sack_fmt    = ProtoField.uint8("htoe.sack.format", "Format", base.DEC, { [1] = "bitmap" }),
    sack_words  = ProtoField.uint8("htoe.sack.words", "Bitmap words", base.DEC),
    sack_dup    = ProtoField.bool("htoe.sack.dup", "DUP", 8,
                                  { "a frame arrived twice", "not set" }, 0x01),
    sack_rsvd   = ProtoField.uint16("htoe.sack.reserved", "Reserved", base.HEX, nil, 0xFEFF),
    sack_bitmap = ProtoField.bytes("htoe.sack.bitmap", "Bitmap (bit i: seq ack+i held)"),
    sack_held   = ProtoField.string("htoe.sack.held", "Frames held"),
    undecoded   = ProtoField.bytes("htoe.undecoded", "Undecoded payload bytes"),
    npkts_found = ProtoField.uint16("htoe.npkts_found", "HT packets found in the payload", base.DEC),
    retrans     = ProtoField.framenum("htoe.retransmission", "Retransmission of frame", base.NONE),
    icv         = ProtoField.bytes("htoe.macsec_icv", "MACsec ICV (not verified)"),
    -- CTRL messages (docs/wire-format.md "Control frames"); lease messages, protocol 0x4C
    ctrl_proto  = ProtoField.uint8("htoe.ctrl.proto", "CTRL protocol", base.HEX, ctrl_protos),
    lease       = ProtoField.bytes("htoe.lease", "Lease message"),
    l_proto     = ProtoField.uint8("htoe.lease.proto", "Protocol", base.HEX),
    l_version   = ProtoField.uint8("htoe.lease.version", "Version", base.DEC),
    l_type      = ProtoField.uint8("htoe.lease.type", "Type", base.DEC, lease_types),
    l_type_name = ProtoField.string("htoe.lease.type_name", "Type name"),
    l_status    = ProtoField.uint8("htoe.lease.status", "Status", base.DEC, lease_status),
    l_session   = ProtoField.uint32("htoe.lease.session", "Session (lessee incarnation)", base.HEX),
    l_req_id    = ProtoField.uint32("htoe.lease.req_id", "Request id", base.DEC),
    l_lease_id  = ProtoField.uint32("htoe.lease.lease_id", "Lease id", base.HEX),
    l_size      = ProtoField.uint64("htoe.lease.size", "Size (bytes)", base.DEC),
    l_offset    = ProtoField.uint64("htoe.lease.offset", "Offset in the lessor's export", base.HEX),
    l_addr      = ProtoField.uint64("htoe.lease.addr", "HT address at the lessor", base.HEX),
    l_duration  = ProtoField.uint64("htoe.lease.duration", "Duration (ns)", base.DEC),
    l_extra     = ProtoField.bytes("htoe.lease.extra", "Bytes after the version-1 message"),
    -- digest messages, protocol 0x44 (docs/wire-format.md "Digest messages")
    digest      = ProtoField.bytes("htoe.digest", "Digest message"),
    d_version   = ProtoField.uint8("htoe.digest.version", "Version", base.DEC),
    d_type      = ProtoField.uint8("htoe.digest.type", "Type", base.DEC, digest_types),
    d_type_name = ProtoField.string("htoe.digest.type_name", "Type name"),
    d_status    = ProtoField.uint8("htoe.digest.status", "Status", base.DEC, digest_status),
    d_session   = ProtoField.uint32("htoe.digest.session", "Session (asker incarnation)", base.HEX),
    d_req_id    = ProtoField.uint32("htoe.digest.req_id", "Request id", base.DEC),
    d_crc       = ProtoField.uint32("htoe.digest.crc", "CRC32C of the range", base.HEX),
    d_offset    = ProtoField.uint64("htoe.digest.offset", "Offset in the answering node's memory", base.HEX),
    d_len       = ProtoField.uint64("htoe.digest.len", "Length (bytes)", base.DEC),
}
p_htoe.fields = {
    hf.version, hf.type, hf.type_name, hf.flags, hf.flags_rsvd, hf.sack, hf.credit_req, hf.cold, hf.vc,
    hf.sack_blk, hf.sack_fmt, hf.sack_words, hf.sack_dup, hf.sack_rsvd, hf.sack_bitmap, hf.sack_held,
    hf.vc_name, hf.npkts, hf.epoch, hf.src, hf.dst, hf.node, hf.seq, hf.nonce, hf.ack,
    hf.credits, hf.p_cmd, hf.p_data, hf.np_cmd, hf.np_data, hf.r_cmd, hf.r_data,
    hf.incarnation, hf.nonce64,
    hf.payload_len, hf.reserved, hf.crc, hf.crc_status, hf.crc_calc, hf.payload,
    hf.undecoded, hf.npkts_found, hf.retrans, hf.icv,
    hf.ctrl_proto, hf.lease, hf.l_proto, hf.l_version, hf.l_type, hf.l_type_name, hf.l_status,
    hf.l_session, hf.l_req_id, hf.l_lease_id, hf.l_size, hf.l_offset, hf.l_addr, hf.l_duration,
    hf.l_extra, hf.digest, hf.d_version, hf.d_type, hf.d_type_name, hf.d_status, hf.d_session,
    hf.d_req_id, hf.d_crc, hf.d_offset, hf.d_len,
}

-- Wireshark 4.0's MACsec dissector hands an integrity-only frame's secure data to the
-- ethertype table with the 16-byte ICV still at its end. Its macsec.etype field tells
-- that the frame came that way.
local f_macsec_etype
do
    local ok, f = pcall(Field.new, "macsec.etype")
    if ok then f_macsec_etype = f end
end
local ICV_LEN = 16

-- ht.* packet fields: names exactly as `htoe-ht decode` prints them
local function u8(name, label, b) return ProtoField.uint8("ht." .. name, label, b or base.DEC) end
local hh = {
    cmd            = u8("cmd", "Cmd", base.HEX),
    name           = ProtoField.string("ht.name", "Command"),
    vc             = ProtoField.string("ht.vc", "VC"),
    len            = ProtoField.uint16("ht.len", "Length (bytes, with prefix and data)", base.DEC),
    seqid          = u8("seqid", "SeqID"),
    unitid         = u8("unitid", "UnitID"),
    passpw         = u8("passpw", "PassPW"),
    srctag         = u8("srctag", "SrcTag"),
    posted         = u8("posted", "Posted (Cmd[5])"),
    dword          = u8("dword", "Dword (Cmd[2]: 1 dword, 0 byte)"),
    isoc           = u8("isoc", "Isoc"),
    coherent       = u8("coherent", "Coherent (Cmd[0])"),
    compat         = u8("compat", "Compat"),
    responsepasspw = u8("responsepasspw", "ResponsePassPW (Cmd[3])"),
    chain          = u8("chain", "Chain"),
    dataerror      = u8("dataerror", "DataError"),
    bridge         = u8("bridge", "Bridge"),
    error0         = u8("error0", "Error0"),
    error1         = u8("error1", "Error1"),
    rquid          = u8("rquid", "RqUID"),
    rspvcset       = u8("rspvcset", "RspVCSet"),
    count          = u8("count", "Count"),
    mask           = ProtoField.uint32("ht.mask", "Mask", base.HEX),
    addr           = ProtoField.uint64("ht.addr", "Address", base.HEX),
    addrext        = u8("addrext", "AddrExt (0x3E prefix present)"),
    postcmd        = u8("postcmd", "PostCmd"),
    postdata       = u8("postdata", "PostData"),
    resp           = u8("resp", "Response"),
    respdata       = u8("respdata", "ResponseData"),
    npcmd          = u8("npcmd", "NonPostCmd"),
    npdata         = u8("npdata", "NonPostData"),
    discon         = u8("discon", "DisCon"),
    diag           = u8("diag", "Diag"),
    ack            = u8("ack", "Ack (RxNextPktToAck)"),
    long           = u8("long", "Long form"),
    vcset          = u8("vcset", "VCSet"),
    vcsetrsv       = u8("vcsetrsv", "VCSetRsv"),
    vcsetfree0     = u8("vcsetfree0", "VCSetFree0"),
    vcsetfree1     = u8("vcsetfree1", "VCSetFree1"),
    vcsetfree2     = u8("vcsetfree2", "VCSetFree2"),
    vcsetfree3     = u8("vcsetfree3", "VCSetFree3"),
    op             = ProtoField.string("ht.op", "Atomic operation"),
    error          = ProtoField.string("ht.error", "Response error"),
    data           = ProtoField.bytes("ht.data", "Data"),
    -- extra fields (not in `htoe-ht decode`)
    prefix         = ProtoField.uint32("ht.prefix", "Address-extension prefix (Cmd 0x3E)", base.HEX),
    prefix_hi      = ProtoField.uint32("ht.prefix.addr_hi", "Addr[63:40]", base.HEX),
    bytes_en       = ProtoField.string("ht.mask.bytes", "Byte enables"),
    addend         = ProtoField.uint64("ht.atomic.addend", "Addend", base.HEX),
    compare        = ProtoField.uint64("ht.atomic.compare", "Compare", base.HEX),
    swap           = ProtoField.uint64("ht.atomic.swap", "Swap", base.HEX),
    invalid        = ProtoField.string("ht.invalid", "Decode error"),
}
do
    -- registered in display order (htoe-ht's), then the extra fields
    local order = {
        "cmd", "name", "vc", "len", "seqid", "unitid", "passpw", "srctag", "posted", "dword",
        "isoc", "coherent", "compat", "responsepasspw", "chain", "dataerror", "bridge",
        "error0", "error1", "rquid", "rspvcset", "count", "mask", "addr", "addrext",
        "postcmd", "postdata", "resp", "respdata", "npcmd", "npdata", "discon", "diag", "ack",
        "long", "vcset", "vcsetrsv", "vcsetfree0", "vcsetfree1", "vcsetfree2", "vcsetfree3",
        "op", "error", "data", "prefix", "prefix_hi", "bytes_en", "addend", "compare", "swap",
        "invalid",
    }
    local list = {}
    for _, k in ipairs(order) do list[#list + 1] = assert(hh[k], k) end
    p_ht.fields = list
end

-- ------------------------------------------------------------- expert info

local G, S = expert.group, expert.severity
local ex = {
    trunc_hdr   = ProtoExpert.new("htoe.expert.truncated_header", "Truncated HToE header (< 32 bytes)",
                                  G.MALFORMED, S.ERROR),
    bad_len     = ProtoExpert.new("htoe.expert.bad_length", "Payload length inconsistent",
                                  G.MALFORMED, S.ERROR),
    bad_version = ProtoExpert.new("htoe.expert.bad_version", "Unsupported HToE version",
                                  G.MALFORMED, S.ERROR),
    bad_type    = ProtoExpert.new("htoe.expert.bad_type", "Invalid frame type",
                                  G.MALFORMED, S.ERROR),
    bad_crc     = ProtoExpert.new("htoe.expert.bad_crc", "Bad CRC32C", G.CHECKSUM, S.ERROR),
    reserved    = ProtoExpert.new("htoe.expert.reserved", "Reserved bit or field set",
                                  G.PROTOCOL, S.ERROR),
    npkts       = ProtoExpert.new("htoe.expert.npkts_mismatch", "npkts does not match the payload",
                                  G.MALFORMED, S.ERROR),
    mtu         = ProtoExpert.new("htoe.expert.mtu", "Header + payload larger than the MTU",
                                  G.PROTOCOL, S.WARN),
    retrans     = ProtoExpert.new("htoe.expert.retransmission", "Retransmission",
                                  G.SEQUENCE, S.NOTE),
    nak         = ProtoExpert.new("htoe.expert.nak", "NAK: go back", G.SEQUENCE, S.NOTE),
    reset       = ProtoExpert.new("htoe.expert.reset", "VL reset", G.SEQUENCE, S.NOTE),
    credit_req  = ProtoExpert.new("htoe.expert.credit_req", "Credit request (sender is starved)",
                                  G.SEQUENCE, S.CHAT),
    lease       = ProtoExpert.new("htoe.expert.lease", "Lease message", G.SEQUENCE, S.CHAT),
    sack        = ProtoExpert.new("htoe.expert.sack", "SACK: frames held after a gap",
                                  G.SEQUENCE, S.CHAT),
    lease_trunc = ProtoExpert.new("htoe.expert.lease_truncated",
                                  "Truncated lease message (< 48 bytes)", G.MALFORMED, S.ERROR),
    lease_bad   = ProtoExpert.new("htoe.expert.lease_invalid",
                                  "Invalid lease message (version or type)", G.MALFORMED, S.ERROR),
    lease_status = ProtoExpert.new("htoe.expert.lease_status", "Lease message with an error status",
                                   G.RESPONSE_CODE, S.WARN),
    digest_bad  = ProtoExpert.new("htoe.expert.digest_invalid",
                                  "Invalid digest message (length, version, type or range)",
                                  G.MALFORMED, S.ERROR),
    leave_bad   = ProtoExpert.new("htoe.expert.leave_invalid",
                                  "Invalid LEAVE message (length or version)", G.MALFORMED, S.ERROR),
    lease_extra = ProtoExpert.new("htoe.expert.lease_extra",
                                  "Lease message longer than 48 bytes (later version?)",
                                  G.PROTOCOL, S.NOTE),
}
p_htoe.prefs.mtu = Pref.uint("HToE MTU", 1500,
    "Bridge MTU (64..9000): header + payload above it is flagged with a warning")

p_htoe.experts = {
    ex.trunc_hdr, ex.bad_len, ex.bad_version, ex.bad_type, ex.bad_crc, ex.reserved, ex.npkts,
    ex.mtu, ex.retrans, ex.nak, ex.reset, ex.credit_req, ex.lease, ex.lease_trunc, ex.sack,
    ex.lease_bad, ex.lease_status, ex.lease_extra, ex.digest_bad, ex.leave_bad,
}
local hx = {
    truncated    = ProtoExpert.new("ht.expert.truncated", "Truncated HT packet",
                                   G.MALFORMED, S.ERROR),
    reserved_cmd = ProtoExpert.new("ht.expert.reserved_cmd", "Reserved HT command code",
                                   G.MALFORMED, S.ERROR),
    reserved_bit = ProtoExpert.new("ht.expert.reserved_bit", "Reserved bit set in an HT packet",
                                   G.MALFORMED, S.ERROR),
    invalid      = ProtoExpert.new("ht.expert.invalid", "HT packet does not decode",
                                   G.MALFORMED, S.ERROR),
    vc_mismatch  = ProtoExpert.new("ht.expert.vc_mismatch", "HT packet of another VC than the frame's",
                                   G.PROTOCOL, S.ERROR),
    info_packet  = ProtoExpert.new("ht.expert.info_packet", "Info packet (NOP/Sync/ExtFC) in a DATA frame",
                                   G.PROTOCOL, S.ERROR),
    poisoned     = ProtoExpert.new("ht.expert.error_response", "Response with error bits (poisoned)",
                                   G.RESPONSE_CODE, S.WARN),
}
p_ht.experts = {
    hx.truncated, hx.reserved_cmd, hx.reserved_bit, hx.invalid, hx.vc_mismatch,
    hx.info_packet, hx.poisoned,
}

-- -------------------------------------------------------------- CRC32C

local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(rshift(c, 1), 0x82F63B78) else c = rshift(c, 1) end
    end
    crc_table[i] = c
end

-- Running CRC-32C register over the bytes of Lua string s (no inversions).
local function crc32c_update(c, s)
    local byte = string.byte
    for i = 1, #s do
        c = bxor(crc_table[band(bxor(c, byte(s, i)), 0xFF)], rshift(c, 8))
    end
    return c
end

-- CRC-32C of header bytes 0..27 followed by the payload, then the 8 bytes
-- of the sequence laps when they are not both 0 (docs/wire-format.md,
-- "Sequence laps").
local function htoe_crc(tvb, plen, seq_lap, ack_lap)
    local c = crc32c_update(0xFFFFFFFF, tvb:raw(0, 28))
    if plen > 0 then c = crc32c_update(c, tvb:raw(HDR_LEN, plen)) end
    if (seq_lap or 0) ~= 0 or (ack_lap or 0) ~= 0 then
        local b = {}
        for _, v in ipairs({ seq_lap, ack_lap }) do
            for k = 3, 0, -1 do b[#b + 1] = string.char(band(rshift(v, 8 * k), 0xFF)) end
        end
        c = crc32c_update(c, table.concat(b))
    end
    return bxor(c, 0xFFFFFFFF)
end

-- The laps are not on the wire: the dissector follows each direction's
-- sequence numbers (per source, destination and epoch) through the capture
-- in order, as a receiver does, and keeps each frame's laps (frame number).
local lap_last = {}    -- "src>dst@epoch" -> highest full DATA sequence number seen
local lap_of = {}      -- frame number -> { seq_lap, ack_lap }

local function near(last, v)
    if not last then return v end
    local d = band(v - band(last, 0xFFFF), 0xFFFF)
    if d >= 0x8000 then d = d - 0x10000 end
    return last + d
end

local function frame_laps(num, src, dst, epoch, ftype, seq, ack)
    local l = lap_of[num]
    if l then return l[1], l[2] end
    local s, a = 0, 0
    if ftype ~= FT_RESET and ftype ~= FT_RESET_ACK then
        local key = string.format("%d>%d@%d", src, dst, epoch)
        if ftype == FT_DATA then
            local full = near(lap_last[key], seq)
            if full < 0 then full = seq end
            if not lap_last[key] or full > lap_last[key] then lap_last[key] = full end
            s = math.floor(full / 0x10000)
        end
        -- the ack names the other direction's DATA frames
        local back = lap_last[string.format("%d>%d@%d", dst, src, epoch)]
        local fa = near(back, ack)
        if fa > 0 then a = math.floor(fa / 0x10000) end
    end
    lap_of[num] = { s, a }
    return s, a
end

-- ------------------------------------------------------------- HT packets

-- Command classification (docs/ht-model.md "Command codes").
-- Returns kind name, VC ("P"/"NP"/"R"/nil), layout key; or nil for reserved.
local function classify(cmd)
    if cmd == 0x00 then return "NOP", nil, "nop" end
    if cmd == 0x3F then return "Sync", nil, "sync" end
    if cmd == 0x30 then return "RdResponse", "R", "resp" end
    if cmd == 0x33 then return "TgtDone", "R", "resp" end
    if band(cmd, 0x18) == 0x08 then       -- x01xxx: WrSized
        if band(cmd, 0x20) ~= 0 then return "WrSized", "P", "wrp" end
        return "WrSized", "NP", "wrnp"
    end
    if band(cmd, 0x30) == 0x10 then return "RdSized", "NP", "rd" end   -- 01xxxx
    if cmd == 0x02 then return "Flush", "NP", "flush" end
    if cmd == 0x37 then return "ExtFC", nil, "extfc" end
    if cmd == 0x3A then return "Broadcast", "P", "bcast" end
    if cmd == 0x3C then return "Fence", "P", "fence" end
    if cmd == 0x3D then return "Atomic", "NP", "atomic" end
    return nil
end

local PREFIXABLE = { RdSized = true, WrSized = true, Broadcast = true, Atomic = true }

-- Control bytes (without the prefix) of each layout, and its reserved bits in control
-- dword 0 (docs/ht-model.md; ExtFC is checked in ht_decode).
local CTL_LEN = { nop = 4, sync = 4, resp = 4, wrp = 8, wrnp = 8, rd = 8, flush = 4,
                  bcast = 8, fence = 4, atomic = 8, extfcs = 4, extfcl = 8 }
local RSVD0 = {
    nop = 0x00900080,          -- bits 7, 20, 23
    flush = 0xFFC00000,        -- 31:22
    fence = 0xFFDF0000,        -- 20:16, 31:22
    bcast = 0x03DF0000,        -- 20:16, 25:22
    wrp = 0x00070000,          -- 18:16
    resp = 0x00002040,         -- 6, 13
}

local function bits(v, lo, w) return band(rshift(v, lo), lshift(1, w) - 1) end

-- Minimal little-endian reads on a Lua string (1-based).
local function le32(s, i)
    local a, b, c, d = s:byte(i, i + 3)
    return a + b * 0x100 + c * 0x10000 + d * 0x1000000
end

-- Decode one HT packet from string s (the bytes left in the payload).
-- Returns a table:
--   ok=true: len, cmd, name, vc, fields = { {name, value, dword index or nil}, ... },
--            pfx (0/4), d0, d1, pfxdw, data_off, data_len, mask, op, error, err (text,
--            a decode error found after the length was known), errkind
--   ok=false: err (text), errkind, len (bytes shown: the rest)
local function ht_decode(s)
    local n = #s
    if n < 4 then return { ok = false, err = "truncated packet", errkind = "truncated" } end
    local pfx = 0
    local b0 = s:byte(1)
    if band(b0, 0x3F) == 0x3E then
        if rshift(b0, 6) ~= 0 then
            return { ok = false, err = "bad address-extension prefix", errkind = "invalid" }
        end
        if n < 8 then return { ok = false, err = "truncated packet", errkind = "truncated" } end
        local k = classify(band(s:byte(5), 0x3F))
        if not k or not PREFIXABLE[k] then
            return { ok = false, err = "bad address-extension prefix", errkind = "invalid" }
        end
        pfx = 4
    end
    local cmd = band(s:byte(pfx + 1), 0x3F)
    local name, vc, lay = classify(cmd)
    if not name then
        return { ok = false, err = "reserved command", errkind = "reserved_cmd", cmd = cmd, pfx = pfx }
    end
    local d0 = le32(s, pfx + 1)
    if lay == "extfc" then
        lay = (bits(d0, 6, 1) == 1) and "extfcl" or "extfcs"
    end
    local count = bits(d0, 22, 4)
    local ctl = CTL_LEN[lay]
    local has_data = (name == "WrSized" or name == "RdResponse" or name == "Atomic")
    local dlen = has_data and 4 * (count + 1) or 0
    local total = pfx + ctl + dlen
    if n < total then
        return { ok = false, err = "truncated packet", errkind = "truncated", cmd = cmd, name = name,
                 want = total }
    end
    local r = { ok = true, len = total, cmd = cmd, name = name, vc = vc, pfx = pfx, d0 = d0,
                fields = {}, lay = lay }
    local d1 = (ctl == 8) and le32(s, pfx + 5) or 0
    r.d1 = d1
    if pfx == 4 then r.pfxdw = le32(s, 1) end
    local F = r.fields
    local function add(fname, v, dw) F[#F + 1] = { fname, v, dw } end
    local function seterr(text, kind) if not r.err then r.err = text; r.errkind = kind end end

    if lay == "sync" then
        if d0 ~= 0xFFFFFFFF then seterr("bad sync packet", "invalid") end
        return r
    end

    -- reserved bits (step 6 of the decode order)
    local rs0 = RSVD0[lay] or 0
    if lay == "extfcs" then rs0 = 0x00000880 end
    if band(d0, rs0) ~= 0 then seterr("reserved bit set", "reserved_bit") end
    if lay == "extfcl" then
        if band(d0, 0x00000880) ~= 0 or band(d1, 0x00FF0000) ~= 0 then
            seterr("reserved bit set", "reserved_bit")
        end
    end

    local addr_lo, addr_hi -- 64-bit address as two 32-bit halves
    local function req_head()
        add("seqid", bor(lshift(bits(d0, 6, 2), 2), bits(d0, 13, 2)), 0)
        add("unitid", bits(d0, 8, 5), 0)
        add("passpw", bits(d0, 15, 1), 0)
    end
    local function sized_mods()
        add("posted", bits(d0, 5, 1), 0)
        add("dword", bits(d0, 2, 1), 0)
        add("isoc", bits(d0, 1, 1), 0)
        add("coherent", bits(d0, 0, 1), 0)
        add("compat", bits(d0, 21, 1), 0)
    end
    local function address()
        -- Addr[7:2] = d0 bits 31:26, Addr[39:8] = d1, Addr[63:40] = prefix bits 31:8
        local a72 = bits(d0, 26, 6)
        addr_lo = band(bor(lshift(band(d1, 0x00FFFFFF), 8), lshift(a72, 2)), 0xFFFFFFFF)
        addr_hi = rshift(d1, 24)
        if pfx == 4 then addr_hi = bor(addr_hi, lshift(band(rshift(r.pfxdw, 8), 0xFFFFFF), 8)) end
        addr_hi = band(addr_hi, 0xFFFFFFFF)
        r.addr_lo, r.addr_hi = addr_lo, addr_hi
        add("addr", "ADDR", 1)
        add("addrext", pfx == 4 and 1 or 0, nil)
    end
    r.data_off = pfx + ctl
    r.data_len = dlen

    if lay == "rd" or lay == "wrnp" or lay == "wrp" then
        local dw = bits(d0, 2, 1)
        req_head()
        if lay ~= "wrp" then add("srctag", bits(d0, 16, 5), 0) end
        sized_mods()
        if lay == "rd" then add("responsepasspw", bits(d0, 3, 1), 0) end
        if lay == "wrp" then
            add("chain", bits(d0, 19, 1), 0)
            add("dataerror", bits(d0, 20, 1), 0)
        end
        add("count", count, 0)
        local mask
        if dw == 0 then
            if lay == "rd" then
                mask = count
                add("mask", mask, 0)
            else
                mask = le32(s, pfx + ctl + 1)
                r.mask_off = pfx + ctl
                add("mask", mask, "mask")
                r.data_off = pfx + ctl + 4
                r.data_len = dlen - 4
            end
            r.mask = mask
        end
        address()
        -- step 7 rules
        if dw == 1 then
            if bits(addr_lo, 2, 4) + count > 15 then seterr("bad address", "invalid") end
        elseif lay ~= "rd" then
            local first = bits(addr_lo, 2, 3)
            if count == 0 or count > 8 then
                seterr("illegal count", "invalid")
            elseif first + count > 8 then
                seterr("bad byte-write mask", "invalid")
            else
                local allowed = 0
                for k = first, first + count - 1 do allowed = bor(allowed, lshift(0xF, 4 * k)) end
                if band(mask, bxor(allowed, 0xFFFFFFFF)) ~= 0 then
                    seterr("bad byte-write mask", "invalid")
                end
            end
        end
    elseif lay == "flush" then
        req_head()
        add("srctag", bits(d0, 16, 5), 0)
        add("isoc", bits(d0, 21, 1), 0)
    elseif lay == "fence" then
        req_head()
        add("isoc", bits(d0, 21, 1), 0)
    elseif lay == "bcast" then
        req_head()
        add("compat", bits(d0, 21, 1), 0)
        address()
    elseif lay == "atomic" then
        req_head()
        add("srctag", bits(d0, 16, 5), 0)
        add("compat", bits(d0, 21, 1), 0)
        add("count", count, 0)
        address()
        if count == 1 then r.op = "fetchadd" elseif count == 3 then r.op = "cas" end
        if count ~= 1 and count ~= 3 then
            seterr("illegal count", "invalid")
        elseif bits(d0, 26, 1) == 1 then
            seterr("bad address", "invalid")
        end
    elseif lay == "resp" then
        add("unitid", bits(d0, 8, 5), 0)
        add("srctag", bits(d0, 16, 5), 0)
        add("passpw", bits(d0, 15, 1), 0)
        add("isoc", bits(d0, 7, 1), 0)
        add("bridge", bits(d0, 14, 1), 0)
        add("error0", bits(d0, 21, 1), 0)
        add("error1", bits(d0, 29, 1), 0)
        add("rquid", bits(d0, 30, 2), 0)
        add("rspvcset", bits(d0, 26, 3), 0)
        add("count", count, 0)
        r.error = rsp_err_names[bits(d0, 21, 1) * 2 + bits(d0, 29, 1)]
        if name == "TgtDone" and count ~= 0 then seterr("illegal count", "invalid") end
    elseif lay == "nop" then
        add("postcmd", bits(d0, 8, 2), 0)
        add("postdata", bits(d0, 10, 2), 0)
        add("resp", bits(d0, 12, 2), 0)
        add("respdata", bits(d0, 14, 2), 0)
        add("npcmd", bits(d0, 16, 2), 0)
        add("npdata", bits(d0, 18, 2), 0)
        add("isoc", bits(d0, 21, 1), 0)
        add("discon", bits(d0, 6, 1), 0)
        add("diag", bits(d0, 22, 1), 0)
        add("ack", bits(d0, 24, 8), 0)
    elseif lay == "extfcs" or lay == "extfcl" then
        local long = lay == "extfcl"
        add("long", bits(d0, 6, 1), 0)
        add("vcset", bits(d0, 8, 3), 0)
        add("vcsetrsv", bits(d0, 12, 4), 0)
        add("vcsetfree0", bits(d0, 16, 8), 0)
        add("vcsetfree1", long and bits(d0, 24, 8) or 0, long and 0 or nil)
        add("vcsetfree2", long and bits(d1, 0, 8) or 0, long and 1 or nil)
        add("vcsetfree3", long and bits(d1, 8, 8) or 0, long and 1 or nil)
        add("ack", long and bits(d1, 24, 8) or bits(d0, 24, 8), long and 1 or 0)
    end
    if not has_data then r.data_len = 0 end
    return r
end

-- Add one decoded HT packet to the tree. tvb range of the packet starts at off.
local function ht_tree(tvb, off, tree, r, pinfo)
    local plen = r.len
    local rng = tvb(off, plen)
    local label = string.format("HT %s (Cmd 0x%02x)", r.name, r.cmd)
    if r.vc then label = label .. ", VC " .. r.vc end
    if r.op then label = label .. ", " .. r.op end
    if r.error and r.error ~= "ok" then label = label .. ", " .. r.error end
    label = label .. string.format(", %d bytes", plen)
    local st = tree:add(p_ht, rng, label)
    local ctl = off + r.pfx
    local ctl_len = CTL_LEN[r.lay] or 4
    local dw_rng = { [0] = tvb(ctl, 4) }
    if ctl_len == 8 then dw_rng[1] = tvb(ctl + 4, 4) end

    if r.pfx == 4 then
        local pt = st:add_le(hh.prefix, tvb(off, 4))
        pt:add(hh.prefix_hi, tvb(off, 4), band(rshift(r.pfxdw, 8), 0xFFFFFF))
    end
    st:add(hh.cmd, tvb(ctl, 1), r.cmd)
    st:add(hh.name, tvb(ctl, 1), r.name)
    if r.vc then st:add(hh.vc, tvb(ctl, 1), r.vc) end
    st:add(hh.len, rng, plen):set_generated()
    for _, f in ipairs(r.fields) do
        local fname, v, dw = f[1], f[2], f[3]
        local frng
        if dw == "mask" then
            frng = tvb(off + r.mask_off, 4)
        elseif dw ~= nil then
            frng = dw_rng[dw] or dw_rng[0]
        end
        if fname == "addr" then
            local a = UInt64.new(r.addr_lo, r.addr_hi)
            local arng = (r.pfx == 4) and tvb(off, r.pfx + ctl_len) or tvb(ctl, ctl_len)
            st:add(hh.addr, arng, a)
        elseif fname == "mask" then
            local it
            if frng then it = st:add(hh.mask, frng, v) else it = st:add(hh.mask, dw_rng[0], v) end
            -- byte enables, per dword of the 32-byte window
            local parts = {}
            local ndw = (r.lay == "rd") and 1 or 8
            for k = 0, ndw - 1 do
                local nib = bits(v, 4 * k, 4)
                if nib ~= 0 then
                    local bs = {}
                    for j = 0, 3 do if bits(nib, j, 1) == 1 then bs[#bs + 1] = tostring(4 * k + j) end end
                    parts[#parts + 1] = table.concat(bs, ",")
                end
            end
            local where = (r.lay == "rd") and "bytes %s of the dword"
                          or "bytes %s of the 32-byte window"
            it:add(hh.bytes_en, frng or dw_rng[0], #parts > 0
                   and string.format(where, table.concat(parts, ",")) or "none"):set_generated()
        elseif frng then
            st:add(hh[fname], frng, v)
        else
            st:add(hh[fname], rng, v):set_generated()
        end
    end
    if r.op then st:add(hh.op, dw_rng[0], r.op) end
    if r.error then st:add(hh.error, dw_rng[0], r.error) end
    if r.data_len and r.data_len > 0 then
        local drng = tvb(off + r.data_off, r.data_len)
        local dt = st:add(hh.data, drng)
        if r.name == "Atomic" and r.data_len >= 8 then
            if r.op == "fetchadd" then
                dt:add_le(hh.addend, tvb(off + r.data_off, 8))
            elseif r.op == "cas" and r.data_len >= 16 then
                dt:add_le(hh.compare, tvb(off + r.data_off, 8))
                dt:add_le(hh.swap, tvb(off + r.data_off + 8, 8))
            end
        end
    end
    if r.err then
        st:add(hh.invalid, rng, r.err)
        local e = hx[r.errkind] or hx.invalid
        st:add_proto_expert_info(e, "HT packet does not decode: " .. r.err)
    end
    if r.error and r.error ~= "ok" then
        st:add_proto_expert_info(hx.poisoned, string.format("%s with error: %s (Error0=%d Error1=%d)",
            r.name, r.error, bits(r.d0, 21, 1), bits(r.d0, 29, 1)))
    end
    return st
end

-- ------------------------------------------------------- retransmissions

-- Per VL (src, dst, epoch): first frame seen for each DATA seq, and the
-- highest seq seen (serial arithmetic mod 2^16). Results are kept per frame
-- number so that re-dissection (GUI clicks, second pass) is stable.
local vl_seen = {}
local retrans_of = {}

function p_htoe.init()
    lap_last, lap_of = {}, {}
    vl_seen = {}
    retrans_of = {}
end

local function serial_le(a, b) return band(b - a, 0xFFFF) < 0x8000 end

local function check_retrans(fnum, key, seq)
    local known = retrans_of[fnum]
    if known ~= nil then return known end
    local st = vl_seen[key]
    if not st then st = { first = {}, max = nil }; vl_seen[key] = st end
    local orig = st.first[seq]
    local res = false
    if orig and orig ~= fnum and st.max and serial_le(seq, st.max) then
        res = orig
    else
        st.first[seq] = fnum
        if not st.max or not serial_le(seq, st.max) then st.max = seq end
    end
    retrans_of[fnum] = res
    return res
end

-- ------------------------------------------------------------ CTRL / lease

-- 1000000000 -> "1s", 250000000 -> "250ms", 0 -> "0" (the lessor's default)
local function ns_text(v)
    local n = tonumber(tostring(v))
    if n == 0 then return "0" end
    for _, u in ipairs({ { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" } }) do
        if n % u[1] == 0 then return string.format("%d%s", n / u[1], u[2]) end
    end
    return tostring(v) .. "ns"
end

-- A digest message at tvb(off, len) (protocol byte checked): its fields, and what a
-- receiver drops it for (htoe_digest_decode). Returns the Info text and a list of errors.
local function digest_tree(tvb, off, len, top)
    local errs = {}
    local dt = top:add(hf.digest, tvb(off, len))
    local function bad(item, msg)
        item:add_proto_expert_info(ex.digest_bad, msg .. " (dropped by the receiver)")
        errs[#errs + 1] = "digest invalid"
    end
    dt:set_text(string.format("Digest message (%d bytes)", len))
    if len ~= DIGEST_MSG_LEN then
        bad(dt, string.format("Digest message of %d bytes, must be 32", len))
        return " Digest [invalid]", errs
    end
    local version, dtype, status = tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint(),
                                   tvb(off + 3, 1):uint()
    local vi = dt:add(hf.d_version, tvb(off + 1, 1))
    local ti = dt:add(hf.d_type, tvb(off + 2, 1))
    local tname = digest_types[dtype] or string.format("type %d", dtype)
    dt:add(hf.d_type_name, tvb(off + 2, 1), tname):set_generated()
    local si = dt:add(hf.d_status, tvb(off + 3, 1))
    dt:add(hf.d_session, tvb(off + 4, 4))
    dt:add(hf.d_req_id, tvb(off + 8, 4))
    local ci = dt:add(hf.d_crc, tvb(off + 12, 4))
    dt:add(hf.d_offset, tvb(off + 16, 8))
    local li = dt:add(hf.d_len, tvb(off + 24, 8))
    dt:append_text(": " .. tname)
    if version ~= DIGEST_VERSION then bad(vi, string.format("Version %d, expected 1", version)) end
    if not digest_types[dtype] then bad(ti, string.format("Type %d, expected 1 or 2", dtype)) end
    if not digest_status[status] or (dtype == 1 and status ~= 0) then
        bad(si, string.format("Status %d not allowed here", status))
    end
    if dtype == 1 and tvb(off + 12, 4):uint() ~= 0 then bad(ci, "A REQUEST carries no CRC") end
    local o, l = tvb(off + 16, 8):uint64(), tvb(off + 24, 8):uint64()
    if l == UInt64(0) or o + l < o then bad(li, "Empty range, or offset + length wraps") end
    local info = string.format(" Digest %s id=%d off=0x%s len=%s", tname, tvb(off + 8, 4):uint(),
                               o:tohex():gsub("^0+(.)", "%1"), tostring(l))
    if dtype == 2 then
        info = info .. (status == 0 and string.format(" crc=0x%08x", tvb(off + 12, 4):uint())
                        or " " .. (digest_status[status] or "?"))
    end
    return info, errs
end

-- One CTRL message at tvb(off, len): the protocol byte, and a lease message in full.
-- Returns the Info text and a list of errors (for the Info column).
local function ctrl_tree(tvb, off, len, top)
    local errs = {}
    if len == 0 then return "", errs end
    local proto = tvb(off, 1):uint()
    top:add(hf.ctrl_proto, tvb(off, 1))
    if proto == DIGEST_PROTO then return digest_tree(tvb, off, len, top) end
    if proto == LEAVE_PROTO then
        if len ~= LEAVE_MSG_LEN or tvb(off + 1, 1):uint() ~= LEAVE_VERSION then
            local msg = string.format("LEAVE of %d bytes or version %d, need %d bytes and %d",
                                      len, len > 1 and tvb(off + 1, 1):uint() or 0,
                                      LEAVE_MSG_LEN, LEAVE_VERSION)
            top:add_proto_expert_info(ex.leave_bad, msg .. " (dropped by the receiver)")
            errs[#errs + 1] = "leave invalid"
            return " LEAVE [invalid]", errs
        end
        return " LEAVE (the sender stops)", errs
    end
    if proto ~= LEASE_PROTO then
        top:add(hf.payload, tvb(off, len))
        return string.format(" proto=0x%02x", proto), errs
    end
    local lt = top:add(hf.lease, tvb(off, len))
    lt:set_text(string.format("Lease message (%d bytes)", len))
    lt:add(hf.l_proto, tvb(off, 1))
    if len < 4 then
        lt:add_proto_expert_info(ex.lease_trunc, string.format(
            "Truncated lease message: %d bytes, need 48", len))
        errs[#errs + 1] = "lease truncated"
        return " Lease [truncated]", errs
    end
    local version, ltype, status = tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint(),
                                   tvb(off + 3, 1):uint()
    local vi = lt:add(hf.l_version, tvb(off + 1, 1))
    local ti = lt:add(hf.l_type, tvb(off + 2, 1))
    local tname = lease_types[ltype] or string.format("type %d", ltype)
    lt:add(hf.l_type_name, tvb(off + 2, 1), tname):set_generated()
    local si = lt:add(hf.l_status, tvb(off + 3, 1))
    local info = " Lease " .. tname
    lt:append_text(": " .. tname)
    if version ~= LEASE_VERSION then
        vi:add_proto_expert_info(ex.lease_bad, string.format(
            "Lease message version %d, expected 1 (dropped by the receiver)", version))
        errs[#errs + 1] = "lease version"
    end
    if not lease_types[ltype] then
        ti:add_proto_expert_info(ex.lease_bad, string.format(
            "Lease message type %d, expected 1..7 (dropped by the receiver)", ltype))
        errs[#errs + 1] = "lease type"
    end
    -- the fields present, even in a truncated message
    local fields = {
        { 4, 4, hf.l_session }, { 8, 4, hf.l_req_id }, { 12, 4, hf.l_lease_id },
        { 16, 8, hf.l_size }, { 24, 8, hf.l_offset }, { 32, 8, hf.l_addr },
        { 40, 8, hf.l_duration },
    }
    for _, f in ipairs(fields) do
        if f[1] + f[2] <= len then lt:add(f[3], tvb(off + f[1], f[2])) end
    end
    if len < LEASE_MSG_LEN then
        lt:add_proto_expert_info(ex.lease_trunc, string.format(
            "Truncated lease message: %d bytes, need 48 (dropped by the receiver)", len))
        errs[#errs + 1] = "lease truncated"
        return info .. " [truncated]", errs
    end
    if len > LEASE_MSG_LEN then
        lt:add(hf.l_extra, tvb(off + LEASE_MSG_LEN, len - LEASE_MSG_LEN))
        lt:add_proto_expert_info(ex.lease_extra, string.format(
            "%d bytes after the 48-byte message (ignored by a version-1 receiver)",
            len - LEASE_MSG_LEN))
    end
    local req_id, lease_id = tvb(off + 8, 4):uint(), tvb(off + 12, 4):uint()
    local size, addr = tvb(off + 16, 8):uint64(), tvb(off + 32, 8):uint64()
    local offs, dur = tvb(off + 24, 8):uint64(), tvb(off + 40, 8):uint64()
    info = info .. string.format(" req=%d", req_id)
    if ltype ~= 1 and ltype ~= 3 then info = info .. string.format(" lease=0x%08x", lease_id) end
    if ltype == 1 then
        info = info .. string.format(" size=%s dur=%s", tostring(size), ns_text(dur))
    elseif ltype == 2 then
        info = info .. string.format(" size=%s off=0x%s addr=0x%s dur=%s", tostring(size),
                                     offs:tohex():gsub("^0+(.)", "%1"),
                                     addr:tohex():gsub("^0+(.)", "%1"), ns_text(dur))
    elseif ltype == 5 and status == 0 then
        info = info .. string.format(" size=%s dur=%s", tostring(size), ns_text(dur))
    end
    if status ~= 0 then
        local sname = lease_status[status] or string.format("status %d", status)
        info = info .. " status=" .. sname
        si:add_proto_expert_info(ex.lease_status, string.format("%s: %s (status %d)", tname,
                                                                sname, status))
    elseif lease_types[ltype] then
        lt:add_proto_expert_info(ex.lease, string.format("Lease %s, request %d", tname, req_id))
    end
    return info, errs
end

-- -------------------------------------------------------------- dissector

-- " RdSized RdSized Atomic"; a run of 3 or more of one name as " RdResponse×12".
local function name_runs(names)
    local out, i = {}, 1
    while i <= #names do
        local j = i
        while j < #names and names[j + 1] == names[i] do j = j + 1 end
        local n = j - i + 1
        if n >= 3 then
            out[#out + 1] = string.format("%s\195\151%d", names[i], n)
        else
            for _ = 1, n do out[#out + 1] = names[i] end
        end
        i = j + 1
    end
    if #out == 0 then return "" end
    return " " .. table.concat(out, " ")
end

function p_htoe.dissector(tvb, pinfo, tree)
    local caplen = tvb:len()
    local replen = tvb:reported_length_remaining()
    local icv
    if f_macsec_etype and f_macsec_etype() and caplen >= ICV_LEN and replen >= ICV_LEN then
        icv = tvb(replen - ICV_LEN, ICV_LEN)
        replen = replen - ICV_LEN
        caplen = math.min(caplen, replen)
    end
    pinfo.cols.protocol = "HToE"
    local top = tree:add(p_htoe, tvb(0, math.min(caplen, HDR_LEN)))
    if icv then tree:add(hf.icv, icv) end

    if replen < HDR_LEN or caplen < HDR_LEN then
        top:add_proto_expert_info(ex.trunc_hdr,
            string.format("Truncated HToE header: %d bytes, need 32", caplen))
        if caplen > 0 then top:add(hf.undecoded, tvb(0, caplen)) end
        pinfo.cols.info = string.format("HToE [truncated header, %d bytes]", caplen)
        return caplen
    end

    local b0 = tvb(0, 1):uint()
    local version, ftype = rshift(b0, 4), band(b0, 0x0F)
    local flags = tvb(1, 1):uint()
    local vc, cold, creq, frsvd = band(flags, 3), band(flags, 4) ~= 0, band(flags, 8) ~= 0,
                                  rshift(flags, 5)
    local sack = band(flags, 0x10) ~= 0
    local sack_pl = sack and (ftype == FT_ACK or ftype == FT_NAK)
    local npkts, epoch = tvb(2, 1):uint(), tvb(3, 1):uint()
    local src, dst = tvb(4, 2):uint(), tvb(6, 2):uint()
    local seq, ack = tvb(8, 2):uint(), tvb(10, 2):uint()
    local plen, rsvd = tvb(24, 2):uint(), tvb(26, 2):uint()
    local crc = tvb(28, 4):uint()
    local tname = ftype_names[ftype] or string.format("type %d", ftype)
    local is_reset = ftype == FT_RESET or ftype == FT_RESET_ACK

    top:append_text(string.format(", %s, %d\226\134\146%d", tname, src, dst))

    -- header fields
    top:add(hf.version, tvb(0, 1))
    local ti = top:add(hf.type, tvb(0, 1))
    top:add(hf.type_name, tvb(0, 1), tname):set_generated()
    local fl = top:add(hf.flags, tvb(1, 1))
    fl:add(hf.flags_rsvd, tvb(1, 1))
    fl:add(hf.sack, tvb(1, 1))
    fl:add(hf.credit_req, tvb(1, 1))
    fl:add(hf.cold, tvb(1, 1))
    fl:add(hf.vc, tvb(1, 1))
    local fnames = {}
    if sack then fnames[#fnames + 1] = "SACK" end
    if creq then fnames[#fnames + 1] = "CREDIT_REQ" end
    if cold then fnames[#fnames + 1] = "COLD" end
    if ftype == FT_DATA then fnames[#fnames + 1] = "VC " .. vc_names[vc] end
    if #fnames > 0 then fl:append_text(" (" .. table.concat(fnames, ", ") .. ")") end
    if ftype == FT_DATA then top:add(hf.vc_name, tvb(1, 1), vc_names[vc]):set_generated() end
    local np_item = top:add(hf.npkts, tvb(2, 1))
    top:add(hf.epoch, tvb(3, 1))
    top:add(hf.src, tvb(4, 2))
    top:add(hf.dst, tvb(6, 2))
    top:add(hf.node, tvb(4, 2)):set_hidden()
    top:add(hf.node, tvb(6, 2)):set_hidden()
    if is_reset then top:add(hf.nonce, tvb(8, 2)) else top:add(hf.seq, tvb(8, 2)) end
    top:add(hf.ack, tvb(10, 2))
    local cr = top:add(hf.credits, tvb(12, 12))
    cr:add(hf.p_cmd, tvb(12, 2)); cr:add(hf.p_data, tvb(14, 2))
    cr:add(hf.np_cmd, tvb(16, 2)); cr:add(hf.np_data, tvb(18, 2))
    cr:add(hf.r_cmd, tvb(20, 2)); cr:add(hf.r_data, tvb(22, 2))
    local pl_item = top:add(hf.payload_len, tvb(24, 2))
    local rs_item = top:add(hf.reserved, tvb(26, 2))
    local crc_item = top:add(hf.crc, tvb(28, 4))

    -- structural checks (validation steps 4..6 of docs/wire-format.md)
    local errs = {}
    if version ~= 1 then
        top:add_proto_expert_info(ex.bad_version, string.format("Version %d, expected 1", version))
        errs[#errs + 1] = "bad version"
    end
    if not ftype_names[ftype] then
        ti:add_proto_expert_info(ex.bad_type, string.format("Invalid frame type %d", ftype))
        errs[#errs + 1] = "bad type"
    end
    local len_ok = HDR_LEN + plen <= replen
    if not len_ok then
        pl_item:add_proto_expert_info(ex.bad_len, string.format(
            "Payload length %d runs past the frame (%d bytes after the header)", plen, replen - HDR_LEN))
        errs[#errs + 1] = "payload length"
    elseif HDR_LEN + plen > MTU_MAX then
        pl_item:add_proto_expert_info(ex.bad_len, string.format(
            "32 + payload length %d exceeds the largest MTU %d", plen, MTU_MAX))
        errs[#errs + 1] = "payload length"
    elseif HDR_LEN + plen > p_htoe.prefs.mtu then
        pl_item:add_proto_expert_info(ex.mtu, string.format(
            "32 + payload length %d exceeds the MTU %d (preference htoe.mtu)", plen, p_htoe.prefs.mtu))
    end

    -- CRC32C over header 0..27 + payload
    local crc_good = nil
    if len_ok and HDR_LEN + plen <= caplen then
        local sl, al = frame_laps(pinfo.number, src, dst, epoch, ftype, seq, ack)
        local calc = htoe_crc(tvb, plen, sl, al)
        if calc ~= crc and (sl ~= 0 or al ~= 0) and htoe_crc(tvb, plen) == crc then
            calc = crc -- a capture that began after the first lap of this VL
        end
        crc_good = (calc == crc)
        crc_item:append_text(crc_good and " [good]" or string.format(" [bad, should be 0x%08x]", calc))
        crc_item:add(hf.crc_status, tvb(28, 4), crc_good and 1 or 0):set_generated()
        crc_item:add(hf.crc_calc, tvb(28, 4), calc):set_generated()
        if not crc_good then
            crc_item:add_proto_expert_info(ex.bad_crc, string.format(
                "Bad CRC32C 0x%08x, computed 0x%08x", crc, calc))
            errs[#errs + 1] = "bad CRC"
        end
    else
        crc_item:add(hf.crc_status, tvb(28, 4), 2):set_generated()
    end

    -- field rules (validation steps 8..10)
    if ftype_names[ftype] then
        local rmsg = {}
        if frsvd ~= 0 then rmsg[#rmsg + 1] = "flags bits 7:5 set" end
        if sack and (ftype == FT_DATA or ftype == FT_CTRL) then
            rmsg[#rmsg + 1] = "SACK in " .. tname
        end
        if creq and ftype ~= FT_ACK then rmsg[#rmsg + 1] = "CREDIT_REQ outside ACK" end
        if rsvd ~= 0 then rmsg[#rmsg + 1] = "reserved bytes 26..27 not 0" end
        if vc == 3 then rmsg[#rmsg + 1] = "VC 3" end
        if ftype ~= FT_DATA and vc ~= 0 then rmsg[#rmsg + 1] = "VC not 0 in " .. tname end
        if ftype ~= FT_DATA and not is_reset and seq ~= 0 then
            rmsg[#rmsg + 1] = "seq not 0 in " .. tname
        end
        if cold and not is_reset then rmsg[#rmsg + 1] = "COLD outside RESET/RESET_ACK" end
        for _, m in ipairs(rmsg) do
            local where = (m:find("bytes 26") and rs_item) or fl
            where:add_proto_expert_info(ex.reserved, "Reserved: " .. m)
        end
        if #rmsg > 0 then errs[#errs + 1] = "reserved" end
        if ftype == FT_DATA and plen == 0 then
            pl_item:add_proto_expert_info(ex.bad_len, "DATA frame with payload length 0")
            errs[#errs + 1] = "payload length"
        elseif sack_pl and (plen < 8 or plen > 516 or plen % 4 ~= 0) then
            pl_item:add_proto_expert_info(ex.bad_len, string.format(
                "%s with SACK: payload length %d (must be 8..516, a multiple of 4)", tname, plen))
            errs[#errs + 1] = "payload length"
        elseif ftype ~= FT_DATA and ftype ~= FT_CTRL and not sack_pl and plen ~= 0 and
               not (is_reset and plen == 12) then
            pl_item:add_proto_expert_info(ex.bad_len,
                string.format("%s frame with payload length %d (must be 0)", tname, plen))
            errs[#errs + 1] = "payload length"
        end
        if ftype == FT_DATA and npkts == 0 then
            np_item:add_proto_expert_info(ex.npkts, "DATA frame with npkts 0")
            errs[#errs + 1] = "npkts"
        elseif ftype ~= FT_DATA and npkts ~= 0 then
            np_item:add_proto_expert_info(ex.npkts,
                string.format("%s frame with npkts %d (must be 0)", tname, npkts))
            errs[#errs + 1] = "npkts"
        end
    end

    -- Info column
    local info = string.format("%s %d\226\134\146%d", tname, src, dst)
    if ftype == FT_DATA then
        info = info .. string.format(" seq=%d ack=%d", seq, ack)
    elseif is_reset then
        info = info .. string.format(" nonce=0x%04x epoch=%d%s ack=%d", seq, epoch,
                                     cold and " cold" or " warm", ack)
    else
        info = info .. string.format(" ack=%d", ack)
    end
    if creq then info = info .. " CREDIT_REQ" end
    if sack and is_reset then info = info .. " SACK-capable" end
    if ftype == FT_NAK then
        top:add_proto_expert_info(ex.nak, string.format("NAK %d\226\134\146%d: go back to seq %d",
            src, dst, ack))
    elseif is_reset then
        top:add_proto_expert_info(ex.reset, string.format("%s %d\226\134\146%d: %s reset, epoch %d, nonce 0x%04x",
            tname, src, dst, cold and "cold" or "warm", epoch, seq))
    elseif creq then
        fl:add_proto_expert_info(ex.credit_req)
    end

    -- retransmission of a DATA frame on its VL
    local rt = false
    if ftype == FT_DATA and crc_good and #errs == 0 then
        local key = string.format("%d:%d:%d", src, dst, epoch)
        rt = check_retrans(pinfo.number, key, seq)
        if rt then
            local it = top:add(hf.retrans, tvb(8, 2), rt)
            it:set_generated()
            it:add_proto_expert_info(ex.retrans, string.format(
                "Retransmission of frame %d (VL %d\226\134\146%d epoch %d seq %d)", rt, src, dst, epoch, seq))
        end
    end

    -- payload
    local avail = math.min(plen, caplen - HDR_LEN)
    if not len_ok then avail = math.max(0, math.min(replen, caplen) - HDR_LEN) end
    local names = {}
    local ctrl_info = ""
    if ftype == FT_DATA and avail > 0 then
        local s = tvb:raw(HDR_LEN, avail)
        local off, found, stopped = 0, 0, false
        while off < avail do
            local r = ht_decode(s:sub(off + 1))
            if not r.ok then
                local rest = tvb(HDR_LEN + off, avail - off)
                local label
                if r.errkind == "reserved_cmd" then
                    label = string.format("HT reserved command (Cmd 0x%02x), %d bytes undecoded",
                                          r.cmd, avail - off)
                else
                    label = string.format("HT packet: %s, %d bytes", r.err, avail - off)
                end
                local st = top:add(p_ht, rest, label)
                if r.cmd then st:add(hh.cmd, tvb(HDR_LEN + off + (r.pfx or 0), 1), r.cmd) end
                if r.name then st:add(hh.name, tvb(HDR_LEN + off, 1), r.name) end
                st:add(hh.invalid, rest, r.err)
                st:add(hf.undecoded, rest)
                local e = hx[r.errkind] or hx.invalid
                local msg = "HT packet does not decode: " .. r.err
                if r.want then
                    msg = string.format("Truncated HT packet: %s needs %d bytes, %d left in the payload",
                                        r.name, r.want, avail - off)
                elseif r.errkind == "reserved_cmd" then
                    msg = string.format("Reserved HT command code 0x%02x", r.cmd)
                end
                st:add_proto_expert_info(e, msg)
                names[#names + 1] = r.name or (r.cmd and string.format("Reserved(0x%02x)", r.cmd) or "?")
                errs[#errs + 1] = r.err
                found = found + 1
                stopped = true
                break
            end
            local st = ht_tree(tvb, HDR_LEN + off, top, r, pinfo)
            found = found + 1
            names[#names + 1] = r.name
            if r.err then errs[#errs + 1] = r.err end
            if r.vc == nil then
                st:add_proto_expert_info(hx.info_packet,
                    string.format("%s is an info packet: never forwarded in a DATA frame", r.name))
                errs[#errs + 1] = "info packet"
            elseif vc < 3 and r.vc ~= vc_names[vc] then
                st:add_proto_expert_info(hx.vc_mismatch,
                    string.format("%s belongs to VC %s, the frame carries VC %s", r.name, r.vc, vc_names[vc]))
                errs[#errs + 1] = "VC mismatch"
            end
            off = off + r.len
        end
        top:add(hf.npkts_found, tvb(HDR_LEN, avail), found):set_generated()
        if not stopped and len_ok and found ~= npkts then
            np_item:add_proto_expert_info(ex.npkts, string.format(
                "npkts is %d, the payload holds %d HT packets", npkts, found))
            errs[#errs + 1] = "npkts"
        end
    elseif sack_pl and avail >= 4 then
        -- SACK block: format, words, flags (DUP), reserved, bitmap relative to ack
        local st = top:add(hf.sack_blk, tvb(HDR_LEN, avail))
        local words = tvb(HDR_LEN + 1, 1):uint()
        st:add(hf.sack_fmt, tvb(HDR_LEN, 1))
        st:add(hf.sack_words, tvb(HDR_LEN + 1, 1))
        st:add(hf.sack_dup, tvb(HDR_LEN + 2, 1))
        st:add(hf.sack_rsvd, tvb(HDR_LEN + 2, 2))
        local held, nbits = {}, math.min(avail - 4, 4 * words) * 8
        if avail > 4 then
            st:add(hf.sack_bitmap, tvb(HDR_LEN + 4, avail - 4))
            for i = 0, nbits - 1 do
                local byte = tvb(HDR_LEN + 4 + math.floor(i / 8), 1):uint()
                if band(byte, rshift(0x80, i % 8)) ~= 0 then
                    held[#held + 1] = tostring((ack + i) % 65536)
                end
            end
        end
        local list = table.concat(held, ",")
        st:add(hf.sack_held, tvb(HDR_LEN + 4, math.max(0, avail - 4)), list):set_generated()
        local bad = tvb(HDR_LEN, 1):uint() ~= 1 or words < 1 or words > 128 or
                    4 + 4 * words ~= plen or band(tvb(HDR_LEN + 2, 2):uint(), 0xFEFF) ~= 0
        if bad then
            st:add_proto_expert_info(ex.reserved, "Reserved: SACK block format, word count or reserved bits")
            errs[#errs + 1] = "reserved"
        end
        st:add_proto_expert_info(ex.sack, string.format("SACK %d\226\134\146%d: ack %d, held %s%s",
            src, dst, ack, list ~= "" and list or "none",
            band(tvb(HDR_LEN + 2, 1):uint(), 1) ~= 0 and ", DUP" or ""))
        info = info .. " SACK=" .. (list ~= "" and list or "-")
    elseif ftype == FT_CTRL and avail > 0 then
        -- message, then the sender's incarnation (4 bytes). Captures made before the
        -- incarnation existed have none: a lease message shorter than 48 + 4 bytes, or a
        -- payload under 5 bytes, is shown without it.
        local mlen = avail
        if avail >= 5 and not (tvb(HDR_LEN, 1):uint() == LEASE_PROTO and avail < 52) then
            mlen = avail - 4
        end
        local cinfo, cerrs = ctrl_tree(tvb, HDR_LEN, mlen, top)
        ctrl_info = cinfo
        if mlen < avail then
            top:add(hf.incarnation, tvb(HDR_LEN + mlen, 4))
            ctrl_info = ctrl_info .. string.format(" inc=0x%08x", tvb(HDR_LEN + mlen, 4):uint())
        end
        for _, e in ipairs(cerrs) do errs[#errs + 1] = e end
    elseif is_reset and avail == 12 then
        top:add(hf.incarnation, tvb(HDR_LEN, 4))
        top:add(hf.nonce64, tvb(HDR_LEN + 4, 8))
        ctrl_info = string.format(" inc=0x%08x", tvb(HDR_LEN, 4):uint())
    elseif avail > 0 then
        top:add(hf.payload, tvb(HDR_LEN, avail))
    end

    if ftype == FT_DATA then
        info = info .. " " .. vc_names[vc] .. ":"
        info = info .. name_runs(names)
    elseif ftype == FT_CTRL then
        info = info .. string.format(" len=%d", plen) .. ctrl_info
    elseif is_reset then
        info = info .. ctrl_info
    end
    if rt then info = "[Retransmission] " .. info end
    if #errs > 0 then
        local seen, uniq = {}, {}
        for _, e in ipairs(errs) do
            if not seen[e] then seen[e] = true; uniq[#uniq + 1] = e end
        end
        info = info .. " [" .. table.concat(uniq, ", ") .. "]"
    end
    pinfo.cols.info = info

    if len_ok then return HDR_LEN + plen end
    return math.min(replen, caplen)
end

DissectorTable.get("ethertype"):add(HTOE_ETHERTYPE, p_htoe)
