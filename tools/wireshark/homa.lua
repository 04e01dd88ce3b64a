-- SPDX-License-Identifier: MIT
-- homa.lua: Wireshark/tshark dissector for Homa (IP protocol 146, or Homa
-- carried over UDP), byte layout as in include/homa/wire.h: the 28-byte
-- common header and DATA, GRANT, RESEND, RPC_UNKNOWN, BUSY, CUTOFFS,
-- FREEZE, NEED_ACK, ACK and START_MSG (0x19, a homa extension). Both
-- implementations' conventions decode: ours (the window field's high byte
-- 0x48 marks our packets, its low byte holds the INCAST 0x01, FINISHED
-- 0x02 and NOSERVER 0x04 extension bits) and the Linux module's (flags 6 and urgent 0xb97d,
-- its TCP-hijacking marker; original DATA packets carry offset -1 and the
-- real offset in seq, shown as homa.data_offset).
-- The runtime's captures (--pcap) of an encrypted socket hold the clear
-- packets with the lowest DSCP bit set (TOS 0x04): shown as
-- homa.travelled_encrypted and "[encrypted]" in the info column.
--
-- Load without compiling anything:
--   tshark -X lua_script:tools/wireshark/homa.lua -r capture.pcap
-- or copy it to ~/.local/lib/wireshark/plugins/.
--
-- Preferences (Edit > Preferences > Protocols > HOMA, or tshark -o):
--   homa.udp_ports  UDP ports always decoded as Homa (a range, e.g. 4000-4010)
--   homa.heuristic  also recognise Homa on any UDP port (default on): the
--                   type byte must be a Homa type, doff must match it and
--                   the Homa ports must equal the UDP ports.
--   tshark tries a port that another protocol registered (44818, 47808,
--   ... even in the ephemeral range) before any heuristic: add
--   -o udp.try_heuristic_first:TRUE when a client's port is one of them.
-- Malformed packets (too short, unknown type, impossible field values) are
-- flagged with expert info "homa.malformed" (filter: homa.malformed).
--
-- PSP (docs/ENCRYPTION.md): Homa sealed in PSP transport mode, on UDP port
-- 1000 or on the Homa port, decodes as protocol "homapsp": the 16-byte
-- header (next header, extension length, crypt offset, S/D/V bits,
-- version, SPI and its key phase, IV), the Homa common header that PSP
-- keeps in clear (crypt offset 7), the encrypted rest as bytes, and the
-- 16-byte ICV. GMAC versions (2, 3) encrypt nothing: their whole Homa
-- packet decodes. Filter: homapsp, homapsp.spi == 0x80000001, ...

local homa = Proto("homa", "Homa Transport Protocol")

local HOMA_COMMON_LEN = 28
local TYPE_DATA, TYPE_GRANT, TYPE_RESEND = 0x10, 0x11, 0x12
local TYPE_CUTOFFS, TYPE_ACK, TYPE_START_MSG = 0x15, 0x18, 0x19

local type_names = {
	[0x10] = "DATA", [0x11] = "GRANT", [0x12] = "RESEND",
	[0x13] = "RPC_UNKNOWN", [0x14] = "BUSY", [0x15] = "CUTOFFS",
	[0x16] = "FREEZE", [0x17] = "NEED_ACK", [0x18] = "ACK",
	[0x19] = "START_MSG",
}

-- Header length of each type (DATA without payload).
local header_len = {
	[0x10] = 56, [0x11] = 33, [0x12] = 37, [0x13] = 28, [0x14] = 28,
	[0x15] = 62, [0x16] = 28, [0x17] = 28, [0x18] = 80, [0x19] = 32,
}

local f = homa.fields
f.sport = ProtoField.uint16("homa.sport", "Source port", base.DEC)
f.dport = ProtoField.uint16("homa.dport", "Destination port", base.DEC)
f.seq = ProtoField.uint32("homa.seq", "Sequence", base.DEC)
f.unused = ProtoField.uint24("homa.unused", "Unused", base.HEX)
f.type = ProtoField.uint8("homa.type", "Type", base.HEX, type_names)
f.doff = ProtoField.uint8("homa.doff", "Header length (32-bit words)", base.DEC, nil, 0xf0)
f.flags = ProtoField.uint8("homa.flags", "Flags (TCP flags byte, not read)", base.HEX)
f.window = ProtoField.uint16("homa.window", "Window", base.DEC)
f.ext_mark = ProtoField.bool("homa.ext.mark", "Extension marker (sent by homa userspace)")
f.ext_incast = ProtoField.bool("homa.ext.incast", "Incast", 8, nil, 0x01)
f.ext_finished = ProtoField.bool("homa.ext.finished", "Finished (RPC_UNKNOWN: do not restart)", 8, nil, 0x02)
f.ext_noserver = ProtoField.bool("homa.ext.noserver", "No server (RPC_UNKNOWN: nothing serves this port)", 8, nil, 0x04)
f.checksum = ProtoField.uint16("homa.checksum", "Checksum (unused)", base.HEX)
f.urgent = ProtoField.uint16("homa.urgent", "Urgent", base.DEC)
f.module_marker = ProtoField.bool("homa.module_marker", "Linux module marker (flags 6, urgent 0xb97d)")
f.sender_id = ProtoField.uint64("homa.sender_id", "Sender RPC id", base.DEC)
f.rpc_id = ProtoField.uint64("homa.rpc_id", "RPC id (client's, even)", base.DEC)
f.from_client = ProtoField.bool("homa.from_client", "Sent by the client")
f.ip_priority = ProtoField.uint8("homa.ip_priority", "Priority (from IP DSCP)", base.DEC)
f.travelled_encrypted = ProtoField.bool("homa.travelled_encrypted",
	"Travelled encrypted (PSP; captured as clear text, DSCP bit 0)")
f.message_length = ProtoField.uint32("homa.message_length", "Message length", base.DEC)
f.incoming = ProtoField.uint32("homa.incoming", "Incoming", base.DEC)
f.ack = ProtoField.none("homa.ack", "Ack")
f.ack_client_id = ProtoField.uint64("homa.ack.client_id", "Client id", base.DEC)
f.ack_server_port = ProtoField.uint16("homa.ack.server_port", "Server port", base.DEC)
f.ack_unused = ProtoField.bytes("homa.ack.unused", "Unused ack slot")
f.cutoff_version = ProtoField.uint16("homa.cutoff_version", "Cutoff version", base.DEC)
f.retransmit = ProtoField.uint8("homa.retransmit", "Retransmit", base.DEC)
f.pad = ProtoField.bytes("homa.pad", "Pad")
f.offset = ProtoField.uint32("homa.offset", "Offset", base.DEC)
f.data_offset = ProtoField.uint32("homa.data_offset", "Data offset (from seq: offset is -1)", base.DEC)
f.payload_len = ProtoField.uint32("homa.payload_len", "Payload length", base.DEC)
f.payload = ProtoField.bytes("homa.payload", "Payload")
f.length = ProtoField.uint32("homa.length", "Length", base.DEC)
f.priority = ProtoField.uint8("homa.priority", "Priority", base.DEC)
f.cutoffs = ProtoField.none("homa.cutoffs", "Cutoffs")
f.cutoff = ProtoField.uint32("homa.cutoff", "Cutoff", base.DEC)
f.num_acks = ProtoField.uint16("homa.num_acks", "Number of acks", base.DEC)
f.trailing = ProtoField.bytes("homa.trailing", "Trailing bytes")

local ef_malformed = ProtoExpert.new("homa.malformed", "Malformed Homa packet",
	expert.group.MALFORMED, expert.severity.ERROR)
local ef_doff = ProtoExpert.new("homa.bad_doff", "Unexpected header length (doff)",
	expert.group.PROTOCOL, expert.severity.WARN)
local ef_trailing = ProtoExpert.new("homa.trailing_bytes", "Bytes after the header",
	expert.group.PROTOCOL, expert.severity.NOTE)
homa.experts = { ef_malformed, ef_doff, ef_trailing }

homa.prefs.udp_ports = Pref.range("UDP ports", "",
	"UDP ports always decoded as Homa (for example 4000-4010)", 65535)
homa.prefs.heuristic = Pref.bool("Heuristic UDP detection", true,
	"Recognise Homa on any UDP port from its type, doff and ports")

local dscp_v4 = Field.new("ip.dsfield.dscp")
local dscp_v6 = Field.new("ipv6.tclass.dscp")

-- ip_dscp(): the DSCP of the innermost IPv4/IPv6 header before this packet.
local function ip_dscp()
	local best
	for _, fi in ipairs({ dscp_v4() }) do
		if not best or fi.offset > best.offset then best = fi end
	end
	for _, fi in ipairs({ dscp_v6() }) do
		if not best or fi.offset > best.offset then best = fi end
	end
	return best and best.value
end

-- malformed(): flag @item with the malformed expert info and @msg.
local function malformed(item, msg)
	item:add_proto_expert_info(ef_malformed, msg)
end

-- add_ack(): one 10-byte ack entry at @off under @tree.
local function add_ack(tvb, tree, off, label)
	local sub = tree:add(f.ack, tvb(off, 10))
	sub:set_text(label)
	sub:add(f.ack_client_id, tvb(off, 8))
	sub:add(f.ack_server_port, tvb(off + 8, 2))
	return tvb(off, 8):uint64(), tvb(off + 8, 2):uint()
end

-- dissect_common(): the 28-byte common header.
local function dissect_common(tvb, pinfo, tree)
	tree:add(f.sport, tvb(0, 2))
	tree:add(f.dport, tvb(2, 2))
	tree:add(f.seq, tvb(4, 4))
	tree:add(f.unused, tvb(8, 3))
	tree:add(f.type, tvb(11, 1))
	local doff_item = tree:add(f.doff, tvb(12, 1))
	tree:add(f.flags, tvb(13, 1))
	local win = tree:add(f.window, tvb(14, 2))
	if tvb(14, 1):uint() == 0x48 then
		win:add(f.ext_mark, tvb(14, 1), true)
		win:add(f.ext_incast, tvb(15, 1))
		win:add(f.ext_finished, tvb(15, 1))
		win:add(f.ext_noserver, tvb(15, 1))
	end
	tree:add(f.checksum, tvb(16, 2))
	tree:add(f.urgent, tvb(18, 2))
	if tvb(13, 1):uint() == 6 and tvb(18, 2):uint() == 0xb97d then
		tree:add(f.module_marker, tvb(13, 1), true):set_generated()
	end
	local sid = tvb(20, 8):uint64()
	tree:add(f.sender_id, tvb(20, 8))
	local low = sid:band(UInt64.new(1, 0))
	tree:add(f.rpc_id, tvb(20, 8), sid:band(UInt64.new(0xfffffffe, 0xffffffff))):set_generated()
	tree:add(f.from_client, tvb(20, 8), low == UInt64.new(0, 0)):set_generated()
	return doff_item, sid
end

-- dissect_data(): DATA fields and payload; checks the payload fits the message.
local function dissect_data(tvb, pinfo, tree, len)
	local mlen = tvb(28, 4):uint()
	tree:add(f.message_length, tvb(28, 4))
	tree:add(f.incoming, tvb(32, 4))
	add_ack(tvb, tree, 36, "Ack")
	tree:add(f.cutoff_version, tvb(46, 2))
	tree:add(f.retransmit, tvb(48, 1))
	tree:add(f.pad, tvb(49, 3))
	local off = tvb(52, 4):uint()
	local oitem = tree:add(f.offset, tvb(52, 4))
	if off == 0xffffffff then
		off = tvb(4, 4):uint()
		oitem:append_text(" (-1: the offset is in seq)")
		oitem = tree:add(f.data_offset, tvb(4, 4))
		oitem:set_generated()
	end
	local plen = len - 56
	local pitem = tree:add(f.payload_len, plen):set_generated()
	local captured = math.min(plen, tvb:len() - 56)
	if captured > 0 then tree:add(f.payload, tvb(56, captured)) end
	if plen == 0 then
		malformed(pitem, "DATA packet without payload")
	elseif off + plen > mlen then
		malformed(oitem, string.format("data %d..%d runs past message_length %d",
			off, off + plen, mlen))
	end
	return string.format("%d@%d of %d", plen, off, mlen)
end

-- check_priority(): GRANT/RESEND priority must be below 8.
local function check_priority(item, prio)
	if prio >= 8 then malformed(item, string.format("priority %d >= 8", prio)) end
end

-- dissect_grant(): offset and priority.
local function dissect_grant(tvb, pinfo, tree)
	tree:add(f.offset, tvb(28, 4))
	local prio = tvb(32, 1):uint()
	check_priority(tree:add(f.priority, tvb(32, 1)), prio)
	return string.format("offset %d prio %d", tvb(28, 4):uint(), prio)
end

-- dissect_resend(): offset, length (all ones = everything) and priority.
local function dissect_resend(tvb, pinfo, tree)
	tree:add(f.offset, tvb(28, 4))
	local litem = tree:add(f.length, tvb(32, 4))
	local len = tvb(32, 4):uint()
	if len == 0xffffffff then litem:append_text(" (everything)") end
	local prio = tvb(36, 1):uint()
	check_priority(tree:add(f.priority, tvb(36, 1)), prio)
	return string.format("%s@%d prio %d", len == 0xffffffff and "all" or tostring(len),
		tvb(28, 4):uint(), prio)
end

-- dissect_cutoffs(): the 8 cutoffs and their version.
local function dissect_cutoffs(tvb, pinfo, tree)
	local sub = tree:add(f.cutoffs, tvb(28, 32))
	local vals = {}
	for i = 0, 7 do
		local it = sub:add(f.cutoff, tvb(28 + 4 * i, 4))
		it:prepend_text(string.format("[%d] ", i))
		vals[#vals + 1] = tostring(tvb(28 + 4 * i, 4):uint())
	end
	tree:add(f.cutoff_version, tvb(60, 2))
	return string.format("v%d [%s]", tvb(60, 2):uint(), table.concat(vals, " "))
end

-- dissect_ack(): num_acks, then each used entry; unused slots shown as bytes.
local function dissect_ack(tvb, pinfo, tree)
	local n = tvb(28, 2):uint()
	local nitem = tree:add(f.num_acks, tvb(28, 2))
	if n > 5 then malformed(nitem, string.format("num_acks %d > 5", n)) end
	for i = 0, 4 do
		local off = 30 + 10 * i
		if i < n then
			add_ack(tvb, tree, off, string.format("Ack %d", i))
		else
			tree:add(f.ack_unused, tvb(off, 10))
		end
	end
	return string.format("%d acks", n)
end

-- dissect_start(): START_MSG's message_length.
local function dissect_start(tvb, pinfo, tree)
	local mlen = tvb(28, 4):uint()
	local it = tree:add(f.message_length, tvb(28, 4))
	if mlen == 0 then malformed(it, "START_MSG with message_length 0") end
	return string.format("length %d", mlen)
end

local body = {
	[TYPE_DATA] = dissect_data, [TYPE_GRANT] = dissect_grant,
	[TYPE_RESEND] = dissect_resend, [TYPE_CUTOFFS] = dissect_cutoffs,
	[TYPE_ACK] = dissect_ack, [TYPE_START_MSG] = dissect_start,
}

-- check_shape(): type known, long enough, doff as expected. Returns the
-- header length, or nil when the body cannot be decoded.
local function check_shape(tvb, tree, ptype, len, doff_item)
	local hlen = header_len[ptype]
	if not hlen then
		malformed(tree, string.format("unknown packet type 0x%02x", ptype))
		return nil
	end
	if len < hlen then
		malformed(tree, string.format("%s needs %d bytes, packet has %d",
			type_names[ptype], hlen, len))
		return nil
	end
	local want = (ptype == TYPE_DATA) and 14 or 5
	local doff = math.floor(tvb(12, 1):uint() / 16)
	if doff ~= want then
		doff_item:add_proto_expert_info(ef_doff,
			string.format("doff %d, expected %d", doff, want))
	end
	return hlen
end

-- homa.dissector(): decode one Homa packet (the whole tvb). Lengths are
-- the reported (on the wire) ones, so a capture cut by snaplen still
-- decodes its header and shows the true payload length.
function homa.dissector(tvb, pinfo, tree)
	local len = tvb:reported_len()
	pinfo.cols.protocol = "HOMA"
	local root = tree:add(homa, tvb())
	if len < HOMA_COMMON_LEN then
		malformed(root, string.format("%d bytes, shorter than the 28-byte common header", len))
		pinfo.cols.info = "Malformed Homa (truncated)"
		return len
	end
	local ptype = tvb(11, 1):uint()
	local doff_item, sid = dissect_common(tvb, pinfo, root)
	-- DSCP: the priority in its 3 high bits (TOS = p << 5), and its low bit
	-- set by the runtime's capture of an encrypted socket's clear packets
	local dscp = ip_dscp()
	local prio = dscp and math.floor(dscp / 8)
	local enc = dscp and dscp % 2 == 1
	if prio then root:add(f.ip_priority, prio):set_generated() end
	if enc then root:add(f.travelled_encrypted, true):set_generated() end
	local name = type_names[ptype] or string.format("type 0x%02x", ptype)
	local info = string.format("%s id %s %d > %d", name, tostring(sid),
		tvb(0, 2):uint(), tvb(2, 2):uint())
	local hlen = check_shape(tvb, root, ptype, len, doff_item)
	if hlen and body[ptype] then
		info = info .. " " .. body[ptype](tvb, pinfo, root, len)
	end
	if hlen and ptype ~= TYPE_DATA and tvb:len() > hlen then
		root:add(f.trailing, tvb(hlen, tvb:len() - hlen))
			:add_proto_expert_info(ef_trailing)
	end
	if prio then info = info .. string.format(" [prio %d]", prio) end
	if enc then info = info .. " [encrypted]" end
	if not hlen then info = info .. " [Malformed]" end
	root:append_text(", " .. name)
	pinfo.cols.info = info
	return len
end

-- heuristic(): Homa on an unregistered UDP port.
local function heuristic(tvb, pinfo, tree)
	if not homa.prefs.heuristic or tvb:len() < HOMA_COMMON_LEN then return false end
	if tvb:reported_len() < HOMA_COMMON_LEN then return false end
	local ptype = tvb(11, 1):uint()
	if not header_len[ptype] then return false end
	local want = (ptype == TYPE_DATA) and 0xe0 or 0x50
	if tvb(12, 1):uint() ~= want then return false end
	if tvb(0, 2):uint() ~= pinfo.src_port or tvb(2, 2):uint() ~= pinfo.dst_port then
		return false
	end
	homa.dissector(tvb, pinfo, tree)
	return true
end

local udp_table = DissectorTable.get("udp.port")
local registered_ports = ""

-- homa.prefs_changed(): move the UDP port registration to the new range.
function homa.prefs_changed()
	local ports = tostring(homa.prefs.udp_ports)
	if ports == registered_ports then return end
	if registered_ports ~= "" then udp_table:remove(registered_ports, homa) end
	if ports ~= "" then udp_table:add(ports, homa) end
	registered_ports = ports
end

DissectorTable.get("ip.proto"):add(146, homa)
homa:register_heuristic("udp", heuristic)

-- PSP ---------------------------------------------------------------------

local psp = Proto("homapsp", "PSP (Homa in PSP transport mode)")
local PSP_HDR, PSP_ICV, PSP_UDP_PORT = 16, 16, 1000
local psp_versions = {
	[0] = "AES-GCM-128", [1] = "AES-GCM-256",
	[2] = "AES-GMAC-128 (integrity only)", [3] = "AES-GMAC-256 (integrity only)",
}
local pf = psp.fields
pf.next_hdr = ProtoField.uint8("homapsp.next_hdr", "Next header", base.DEC)
pf.ext_len = ProtoField.uint8("homapsp.hdr_ext_len", "Header extension length (8-byte units)", base.DEC)
pf.crypt_off = ProtoField.uint8("homapsp.crypt_off", "Crypt offset (4-byte units)", base.DEC, nil, 0x3f)
pf.s = ProtoField.bool("homapsp.s", "S (sample)", 8, nil, 0x80)
pf.d = ProtoField.bool("homapsp.d", "D (drop after sampling)", 8, nil, 0x40)
pf.version = ProtoField.uint8("homapsp.version", "Version", base.DEC, psp_versions, 0x3c)
pf.v = ProtoField.bool("homapsp.v", "V (virtualization cookie)", 8, nil, 0x02)
pf.one = ProtoField.bool("homapsp.one", "Always one", 8, nil, 0x01)
pf.spi = ProtoField.uint32("homapsp.spi", "SPI", base.HEX)
pf.key_phase = ProtoField.uint8("homapsp.key_phase", "Master key (SPI top bit)", base.DEC)
pf.iv = ProtoField.uint64("homapsp.iv", "IV", base.DEC)
pf.encrypted = ProtoField.bytes("homapsp.encrypted", "Encrypted data")
pf.icv = ProtoField.bytes("homapsp.icv", "ICV")

local ef_psp_bad = ProtoExpert.new("homapsp.malformed", "Malformed PSP packet",
	expert.group.MALFORMED, expert.severity.ERROR)
psp.experts = { ef_psp_bad }

-- psp_shape(): true when @tvb starts like PSP carrying Homa: next header
-- 146, no extension, crypt offset 7 (the common header), S, D and V clear,
-- the always-one bit set, and room for the header, common header and ICV.
local function psp_shape(tvb)
	if tvb:len() < PSP_HDR + HOMA_COMMON_LEN + PSP_ICV then return false end
	local flags = tvb(3, 1):uint()
	return tvb(0, 1):uint() == 146 and tvb(1, 1):uint() == 1 and tvb(2, 1):uint() == 7
		and bit.band(flags, 0xc3) == 0x01
end

-- psp.dissector(): the PSP header, then Homa: the clear common header
-- (GCM) or the whole packet (GMAC), the ciphertext and the ICV.
function psp.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	local root = tree:add(psp, tvb())
	pinfo.cols.protocol = "PSP/HOMA"
	if not psp_shape(tvb) then
		root:add_proto_expert_info(ef_psp_bad, "not PSP carrying Homa, or truncated")
		pinfo.cols.info = "Malformed PSP"
		return len
	end
	root:add(pf.next_hdr, tvb(0, 1))
	root:add(pf.ext_len, tvb(1, 1))
	root:add(pf.crypt_off, tvb(2, 1))
	for _, k in ipairs({ "s", "d", "version", "v", "one" }) do root:add(pf[k], tvb(3, 1)) end
	root:add(pf.spi, tvb(4, 4))
	root:add(pf.key_phase, tvb(4, 1), bit.rshift(tvb(4, 1):uint(), 7)):set_generated()
	root:add(pf.iv, tvb(8, 8))
	local version = bit.rshift(bit.band(tvb(3, 1):uint(), 0x3c), 2)
	local body = len - PSP_HDR - PSP_ICV
	local info
	if version >= 2 then
		homa.dissector(tvb(PSP_HDR, body):tvb(), pinfo, tree)
		info = tostring(pinfo.cols.info)
	else
		local htree = tree:add(homa, tvb(PSP_HDR, HOMA_COMMON_LEN))
		htree:append_text(" (common header in clear)")
		local _, sid = dissect_common(tvb(PSP_HDR, HOMA_COMMON_LEN):tvb(), pinfo, htree)
		local ptype = tvb(PSP_HDR + 11, 1):uint()
		local name = type_names[ptype] or string.format("type 0x%02x", ptype)
		info = string.format("%s id %s %d > %d", name, tostring(sid),
			tvb(PSP_HDR, 2):uint(), tvb(PSP_HDR + 2, 2):uint())
		if body > HOMA_COMMON_LEN then
			root:add(pf.encrypted, tvb(PSP_HDR + HOMA_COMMON_LEN, body - HOMA_COMMON_LEN))
		end
	end
	root:add(pf.icv, tvb(len - PSP_ICV, PSP_ICV))
	pinfo.cols.protocol = "PSP/HOMA"
	pinfo.cols.info = string.format("PSP %s spi 0x%08x iv %s: %s",
		psp_versions[version] and psp_versions[version]:match("^%S+") or "?",
		tvb(4, 4):uint(), tostring(tvb(8, 8):uint64()), info)
	return len
end

-- psp_heuristic(): PSP on a Homa port (the UDP driver's carriage): the
-- clear common header's ports must equal the UDP ports; or in a capture
-- of the runtime (--pcap of an encrypted socket), which takes the UDP
-- ports from the packet's first four bytes, here the PSP header's.
local function psp_heuristic(tvb, pinfo, tree)
	if not homa.prefs.heuristic or not psp_shape(tvb) then return false end
	local homa_ports = tvb(PSP_HDR, 2):uint() == pinfo.src_port
		and tvb(PSP_HDR + 2, 2):uint() == pinfo.dst_port
	local pcap_ports = tvb(0, 2):uint() == pinfo.src_port and tvb(2, 2):uint() == pinfo.dst_port
	if not homa_ports and not pcap_ports then return false end
	psp.dissector(tvb, pinfo, tree)
	return true
end

udp_table:add(PSP_UDP_PORT, psp)
psp:register_heuristic("udp", psp_heuristic)
