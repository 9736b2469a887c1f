-- rdtp.lua — Wireshark / tshark dissector for rdtp, wire format version 3 (docs/PROTOCOL.md).
--
-- Install (Wireshark ≥ 3.0, Linux; personal Lua plugins folder):
--   install -D -m 644 tools/wireshark/rdtp.lua ~/.local/lib/wireshark/plugins/rdtp.lua
-- or for one run: tshark -X lua_script:tools/wireshark/rdtp.lua -r capture.pcap
--
-- Decodes every message (Request, Data, Nack, ResolveRequest, ResolveResponse, ListRequest,
-- ListResponse, Retry, ProofRequest, Proof) and option (EXTRA_RANGES, ANTICIPATED, REQUEST_NONCE,
-- ROUTER_ANNOTATION, ADDRESS_TOKEN; unknown
-- ones as raw TLVs), on UDP ports 7447 (rdtp serve) and 7448 (rdtp route), and on any
-- other UDP port by heuristic (magic "RD", a known version and type). Filter fields start
-- with "rdtp." (Analyze › Expert information lists malformed datagrams and Nacks).
-- crates/rdtp-proto/tests/dissector.rs checks it against the test vectors of PROTOCOL.md
-- and a capture of a real fetch through a router (tools/wireshark/fetch-via-router.pcap).

local rdtp = Proto("rdtp", "rdtp receiver-driven transport")

local VERSION = 3
local PORTS = { 7447, 7448 }

-- Message types (PROTOCOL.md "Common prefix"). A new type gets a name here, a
-- dissect_<type> function and an entry in DISSECT at the end of this file.
local TYPES = {
    [0x01] = "Request",
    [0x02] = "Data",
    [0x03] = "Nack",
    [0x04] = "ResolveRequest",
    [0x05] = "ResolveResponse",
    [0x06] = "ListRequest",
    [0x07] = "ListResponse",
    [0x08] = "Retry",
    [0x09] = "ProofRequest",
    [0x0a] = "Proof",
}

local OPTIONS = {
    [0x01] = "EXTRA_RANGES",
    [0x02] = "ANTICIPATED",
    [0x03] = "REQUEST_NONCE",
    [0x40] = "ROUTER_ANNOTATION",
    [0x41] = "ADDRESS_TOKEN",
}

local NACK_CODES = {
    [1] = "UnknownContent",
    [2] = "RangeBeyondEnd",
    [3] = "Malformed",
    [4] = "Busy",
    [5] = "TooLarge",
    [6] = "Internal",
    [7] = "UnsupportedVersion",
    [8] = "NoRoute",
    [9] = "Duplicate",
    [10] = "HopLimit",
}

local QUERY_TYPES = { [1] = "name", [2] = "EID" }

local f = rdtp.fields
-- common prefix
f.magic = ProtoField.uint16("rdtp.magic", "Magic", base.HEX)
f.version = ProtoField.uint8("rdtp.version", "Version")
f.type = ProtoField.uint8("rdtp.type", "Type", base.HEX, TYPES)
-- fields several messages share
f.tag = ProtoField.uint32("rdtp.tag", "Tag", base.HEX)
f.eid = ProtoField.bytes("rdtp.eid", "EID", base.NONE)
f.offset = ProtoField.uint64("rdtp.offset", "Offset")
f.length = ProtoField.uint32("rdtp.length", "Length")
f.hop_limit = ProtoField.uint8("rdtp.hop_limit", "Hop limit")
f.hops = ProtoField.uint8("rdtp.hops", "Hops")
f.options_length = ProtoField.uint16("rdtp.options_length", "Options length")
f.reserved = ProtoField.bytes("rdtp.reserved", "Reserved")
f.name = ProtoField.string("rdtp.name", "Name")
f.name_length = ProtoField.uint16("rdtp.name_length", "Name length")
f.size = ProtoField.uint64("rdtp.size", "Size")
-- Request
f.req_flags = ProtoField.uint8("rdtp.request.flags", "Flags", base.HEX)
f.req_app_limited = ProtoField.bool("rdtp.request.flags.app_limited", "APP_LIMITED", 8, nil, 0x01)
f.req_retransmission = ProtoField.bool("rdtp.request.flags.retransmission", "RETRANSMISSION", 8, nil, 0x02)
f.req_origin = ProtoField.bool("rdtp.request.flags.origin", "ORIGIN", 8, nil, 0x04)
f.unit = ProtoField.uint16("rdtp.unit", "Unit")
f.nonce = ProtoField.uint64("rdtp.nonce", "Nonce", base.HEX)
f.first_unit = ProtoField.uint64("rdtp.first_unit", "First unit index")
f.units = ProtoField.uint32("rdtp.units", "Units asked for (all ranges)")
-- options
f.option = ProtoField.none("rdtp.option", "Option")
f.option_type = ProtoField.uint8("rdtp.option.type", "Type", base.HEX, OPTIONS)
f.option_length = ProtoField.uint16("rdtp.option.length", "Length")
f.option_value = ProtoField.bytes("rdtp.option.value", "Value")
f.range_offset = ProtoField.uint64("rdtp.range.offset", "Range offset")
f.range_length = ProtoField.uint32("rdtp.range.length", "Range length")
f.token = ProtoField.bytes("rdtp.token", "Address token", base.NONE)
-- seed 003 anticipated interests and router annotations
f.anticipated_offset = ProtoField.uint64("rdtp.anticipated.offset", "Anticipated range offset")
f.anticipated_length = ProtoField.uint32("rdtp.anticipated.length", "Anticipated range length")
f.request_nonce = ProtoField.uint64("rdtp.request_nonce", "Nonce of the request answered", base.HEX)
f.annotation_node = ProtoField.string("rdtp.annotation.node", "Annotating router")
f.annotation_time = ProtoField.uint64("rdtp.annotation.time", "Time, ns (T_I, or T_D - T_I once returned)")
f.annotation_held = ProtoField.uint64("rdtp.annotation.held", "Anticipated units held (bitmap)", base.HEX)
f.annotation_hops = ProtoField.uint8("rdtp.annotation.hops", "Hops towards the receiver")
f.annotation_flags = ProtoField.uint8("rdtp.annotation.flags", "Flags", base.HEX)
f.annotation_returned = ProtoField.bool("rdtp.annotation.returned", "RETURNED", 8, nil, 0x01)
f.token_epoch = ProtoField.uint32("rdtp.token.epoch", "Epoch (rdtp nodes' tokens)")
f.token_mac = ProtoField.bytes("rdtp.token.mac", "MAC", base.NONE)
-- Data
f.data_flags = ProtoField.uint8("rdtp.data.flags", "Flags", base.HEX)
f.data_app_limited = ProtoField.bool("rdtp.data.flags.app_limited", "APP_LIMITED", 8, nil, 0x01)
f.data_last = ProtoField.bool("rdtp.data.flags.last", "LAST", 8, nil, 0x02)
f.data_cached = ProtoField.bool("rdtp.data.flags.cached", "CACHED", 8, nil, 0x04)
f.data_coalesced = ProtoField.bool("rdtp.data.flags.coalesced", "COALESCED", 8, nil, 0x08)
f.payload_length = ProtoField.uint16("rdtp.payload_length", "Payload length")
f.total_size = ProtoField.uint64("rdtp.total_size", "Total size")
f.served_by = ProtoField.string("rdtp.served_by", "Served by")
f.payload = ProtoField.bytes("rdtp.payload", "Payload")
-- Nack
f.nack_code = ProtoField.uint8("rdtp.nack.code", "Code", base.DEC, NACK_CODES)
f.nack_detail_length = ProtoField.uint16("rdtp.nack.detail_length", "Detail length")
f.nack_from = ProtoField.string("rdtp.nack.from", "From")
f.nack_detail = ProtoField.string("rdtp.nack.detail", "Detail")
-- ResolveRequest / ResolveResponse
f.query_type = ProtoField.uint8("rdtp.resolve.query_type", "Query type", base.DEC, QUERY_TYPES)
f.query_length = ProtoField.uint16("rdtp.resolve.query_length", "Query length")
-- ListRequest / ListResponse
f.list_cursor = ProtoField.uint32("rdtp.list.cursor", "Cursor")
f.list_flags = ProtoField.uint8("rdtp.list.flags", "Flags", base.HEX)
f.list_more = ProtoField.bool("rdtp.list.flags.more", "MORE", 8, nil, 0x01)
f.list_count = ProtoField.uint16("rdtp.list.count", "Entries in this page")
f.list_total = ProtoField.uint32("rdtp.list.total", "Entries in the catalogue")
f.list_entry = ProtoField.none("rdtp.list.entry", "Entry")
-- Retry
f.token_length = ProtoField.uint16("rdtp.retry.token_length", "Token length")
-- ProofRequest / Proof
f.block = ProtoField.uint64("rdtp.proof.block", "Block index")
f.depth = ProtoField.uint8("rdtp.proof.depth", "Depth (siblings wanted)")
f.proof_count = ProtoField.uint8("rdtp.proof.count", "Siblings")
f.sibling = ProtoField.bytes("rdtp.proof.sibling", "Sibling CV", base.NONE)

local ex_malformed = ProtoExpert.new("rdtp.malformed", "Malformed rdtp datagram", expert.group.MALFORMED, expert.severity.ERROR)
local ex_version = ProtoExpert.new("rdtp.version.other", "Other rdtp wire version (not decoded)", expert.group.PROTOCOL, expert.severity.WARN)
local ex_unknown = ProtoExpert.new("rdtp.type.unknown", "Unknown rdtp message type (not decoded)", expert.group.UNDECODED, expert.severity.WARN)
local ex_retransmission = ProtoExpert.new("rdtp.retransmission", "Re-request (RETRANSMISSION)", expert.group.SEQUENCE, expert.severity.NOTE)
local ex_nack = ProtoExpert.new("rdtp.nack", "Nack", expert.group.RESPONSE_CODE, expert.severity.WARN)
local ex_retry = ProtoExpert.new("rdtp.retry", "Retry: address not validated yet", expert.group.SEQUENCE, expert.severity.CHAT)
rdtp.experts = { ex_malformed, ex_version, ex_unknown, ex_retransmission, ex_nack, ex_retry }

-- A node id (8 bytes) as rdtp prints it: a label of 1–8 printable ASCII characters, not
-- starting with "0x", zero-padded (origin, r1, ap); anything else as 0x + 16 hex digits.
local function node_id(range)
    local b = range:bytes()
    local len = 8
    for i = 0, 7 do
        if b:get_index(i) == 0 then
            len = i
            break
        end
    end
    local label = len > 0
    for i = 0, 7 do
        local c = b:get_index(i)
        if i < len then
            label = label and c >= 0x21 and c <= 0x7e
        else
            label = label and c == 0
        end
    end
    if label then
        local text = range:raw(0, len)
        if text:sub(1, 2) ~= "0x" then
            return text
        end
    end
    return "0x" .. string.lower(b:tohex())
end

local function hex(range)
    return string.lower(range:bytes():tohex())
end

-- Fails with `what` unless `n` bytes are there from `at` (the caller marks it malformed).
local function need(tvb, at, n, what)
    if at + n > tvb:len() then
        error({ rdtp = string.format("truncated %s: %d bytes at offset %d, datagram has %d", what, n, at, tvb:len()) }, 0)
    end
end

-- The option area at [at, at + len): TLVs of type (1) · length (2) · value. Returns the
-- token (a TvbRange) if there is an ADDRESS_TOKEN, and the extra ranges.
local function dissect_options(tvb, tree, at, len, unit)
    need(tvb, at, len, "option area")
    local stop = at + len
    local token, ranges = nil, {}
    while at < stop do
        need(tvb, at, 3, "option header")
        local t = tvb(at, 1):uint()
        local l = tvb(at + 1, 2):uint()
        if at + 3 + l > stop then
            error({ rdtp = string.format("option 0x%02x of %d bytes overruns the option area", t, l) }, 0)
        end
        local name = OPTIONS[t] or string.format("unknown 0x%02x%s", t, t >= 0x80 and " (critical)" or "")
        local sub = tree:add(f.option, tvb(at, 3 + l)):set_text(string.format("Option %s, %d bytes", name, l))
        sub:add(f.option_type, tvb(at, 1))
        sub:add(f.option_length, tvb(at + 1, 2))
        local v = at + 3
        if t == 0x01 then
            if l == 0 or l % 12 ~= 0 then
                error({ rdtp = "EXTRA_RANGES length is not a positive multiple of 12" }, 0)
            end
            for r = v, v + l - 12, 12 do
                local ro, rl = tvb(r, 8):uint64(), tvb(r + 8, 4):uint()
                local item = sub:add(f.range_offset, tvb(r, 8))
                sub:add(f.range_length, tvb(r + 8, 4))
                if unit and unit > 0 then
                    item:append_text(string.format(" (units %s–%s)", tostring(ro / unit), tostring((ro + rl) / unit - 1)))
                end
                ranges[#ranges + 1] = { ro, rl }
            end
        elseif t == 0x02 then
            if l == 0 or l % 12 ~= 0 or l > 96 then
                error({ rdtp = "ANTICIPATED length is not 1-8 ranges of 12 bytes" }, 0)
            end
            for r = v, v + l - 12, 12 do
                local item = sub:add(f.anticipated_offset, tvb(r, 8))
                sub:add(f.anticipated_length, tvb(r + 8, 4))
                if unit and unit > 0 then
                    local ro, rl = tvb(r, 8):uint64(), tvb(r + 8, 4):uint()
                    item:append_text(string.format(" (units %s–%s)", tostring(ro / unit), tostring((ro + rl) / unit - 1)))
                end
            end
        elseif t == 0x03 then
            if l ~= 8 then
                error({ rdtp = "REQUEST_NONCE must be 8 bytes" }, 0)
            end
            sub:add(f.request_nonce, tvb(v, 8))
        elseif t == 0x40 then
            if l ~= 26 then
                error({ rdtp = "ROUTER_ANNOTATION must be 26 bytes" }, 0)
            end
            sub:add(f.annotation_node, tvb(v, 8), node_id(tvb(v, 8)))
            sub:add(f.annotation_time, tvb(v + 8, 8))
            sub:add(f.annotation_held, tvb(v + 16, 8))
            sub:add(f.annotation_hops, tvb(v + 24, 1))
            local fl = sub:add(f.annotation_flags, tvb(v + 25, 1))
            fl:add(f.annotation_returned, tvb(v + 25, 1))
        elseif t == 0x41 then
            if l < 1 or l > 64 then
                error({ rdtp = "ADDRESS_TOKEN must be 1–64 bytes" }, 0)
            end
            token = tvb(v, l)
            sub:add(f.token, token)
            if l == 20 then
                sub:add(f.token_epoch, tvb(v, 4))
                sub:add(f.token_mac, tvb(v + 4, 16))
            end
        elseif t >= 0x80 then
            sub:add(f.option_value, tvb(v, l))
            sub:add_proto_expert_info(ex_malformed, "unknown critical option: the datagram is malformed")
        elseif l > 0 then
            sub:add(f.option_value, tvb(v, l))
        end
        at = v + l
    end
    return token, ranges
end

-- The flags byte of a Request or ProofRequest (byte 4), with its bits; returns its value.
local function request_flags(tvb, tree)
    local fl = tree:add(f.req_flags, tvb(4, 1))
    fl:add(f.req_app_limited, tvb(4, 1))
    fl:add(f.req_retransmission, tvb(4, 1))
    fl:add(f.req_origin, tvb(4, 1))
    return tvb(4, 1):uint()
end

local function dissect_request(tvb, pinfo, tree)
    need(tvb, 0, 66, "Request header")
    local flags = request_flags(tvb, tree)
    tree:add(f.hop_limit, tvb(5, 1))
    tree:add(f.unit, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.nonce, tvb(12, 8))
    tree:add(f.eid, tvb(20, 32))
    tree:add(f.offset, tvb(52, 8))
    tree:add(f.length, tvb(60, 4))
    tree:add(f.options_length, tvb(64, 2))
    local unit = tvb(6, 2):uint()
    local offset, length = tvb(52, 8):uint64(), tvb(60, 4):uint()
    local units = 0
    if unit > 0 then
        tree:add(f.first_unit, tvb(52, 8), offset / unit):set_generated()
        units = math.floor(length / unit)
    end
    local token, ranges = dissect_options(tvb, tree, 66, tvb(64, 2):uint(), unit)
    for _, r in ipairs(ranges) do
        if unit > 0 then
            units = units + math.floor(r[2] / unit)
        end
    end
    if unit > 0 then
        tree:add(f.units, tvb(60, 4), units):set_generated()
    end
    local info = string.format("Request tag=0x%08x EID %s… offset %s +%d", tvb(8, 4):uint(), hex(tvb(20, 4)), tostring(offset), length)
    if unit > 0 then
        info = info .. string.format(" (%d unit%s of %d)", units, units == 1 and "" or "s", unit)
    end
    if #ranges > 0 then
        info = info .. string.format(" +%d range%s", #ranges, #ranges == 1 and "" or "s")
    end
    if bit32.band(flags, 0x02) ~= 0 then
        info = info .. " [RETRANSMISSION]"
        tree:add_proto_expert_info(ex_retransmission)
    end
    if bit32.band(flags, 0x04) ~= 0 then
        info = info .. " [ORIGIN]"
    end
    if token then
        info = info .. " [token]"
    end
    pinfo.cols.info:set(info)
    return 66 + tvb(64, 2):uint()
end

local function dissect_data(tvb, pinfo, tree)
    need(tvb, 0, 70, "Data header")
    local flags = tvb(4, 1):uint()
    local fl = tree:add(f.data_flags, tvb(4, 1))
    fl:add(f.data_app_limited, tvb(4, 1))
    fl:add(f.data_last, tvb(4, 1))
    fl:add(f.data_cached, tvb(4, 1))
    fl:add(f.data_coalesced, tvb(4, 1))
    tree:add(f.hops, tvb(5, 1))
    tree:add(f.payload_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.eid, tvb(12, 32))
    tree:add(f.offset, tvb(44, 8))
    tree:add(f.total_size, tvb(52, 8))
    local by = node_id(tvb(60, 8))
    tree:add(f.served_by, tvb(60, 8), by)
    tree:add(f.options_length, tvb(68, 2))
    local olen, plen = tvb(68, 2):uint(), tvb(6, 2):uint()
    dissect_options(tvb, tree, 70, olen, nil)
    need(tvb, 70 + olen, plen, "payload")
    if plen > 0 then
        tree:add(f.payload, tvb(70 + olen, plen))
    end
    local offset, total = tvb(44, 8):uint64(), tvb(52, 8):uint64()
    if offset + plen > total then
        tree:add_proto_expert_info(ex_malformed, "offset + payload length exceeds the total size")
    end
    local marks = ""
    if bit32.band(flags, 0x04) ~= 0 then
        marks = marks .. " [CACHED]"
    end
    if bit32.band(flags, 0x08) ~= 0 then
        marks = marks .. " [COALESCED]"
    end
    if bit32.band(flags, 0x02) ~= 0 then
        marks = marks .. " [LAST]"
    end
    pinfo.cols.info:set(string.format("Data tag=0x%08x offset %s len %d of %s, served by %s, %d hop%s%s",
        tvb(8, 4):uint(), tostring(offset), plen, tostring(total), by, tvb(5, 1):uint(), tvb(5, 1):uint() == 1 and "" or "s", marks))
    return 70 + olen + plen
end

local function dissect_nack(tvb, pinfo, tree)
    need(tvb, 0, 64, "Nack header")
    tree:add(f.nack_code, tvb(4, 1))
    tree:add(f.hops, tvb(5, 1))
    tree:add(f.nack_detail_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.eid, tvb(12, 32))
    tree:add(f.offset, tvb(44, 8))
    tree:add(f.length, tvb(52, 4))
    local from = node_id(tvb(56, 8))
    tree:add(f.nack_from, tvb(56, 8), from)
    local dlen = tvb(6, 2):uint()
    need(tvb, 64, dlen, "Nack detail")
    local detail = ""
    if dlen > 0 then
        detail = tvb(64, dlen):string(ENC_UTF_8)
        tree:add(f.nack_detail, tvb(64, dlen), detail)
    end
    local code = tvb(4, 1):uint()
    local name = NACK_CODES[code] or ("code " .. code)
    tree:add_proto_expert_info(ex_nack, "Nack " .. name .. " from " .. from)
    pinfo.cols.info:set(string.format("Nack %s tag=0x%08x offset %s +%d from %s, %d hop%s: %s", name, tvb(8, 4):uint(),
        tostring(tvb(44, 8):uint64()), tvb(52, 4):uint(), from, tvb(5, 1):uint(), tvb(5, 1):uint() == 1 and "" or "s", detail))
    return 64 + dlen
end

local function dissect_resolve_request(tvb, pinfo, tree)
    need(tvb, 0, 14, "ResolveRequest header")
    tree:add(f.query_type, tvb(4, 1))
    tree:add(f.hop_limit, tvb(5, 1))
    tree:add(f.query_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.options_length, tvb(12, 2))
    local qtype, qlen, olen = tvb(4, 1):uint(), tvb(6, 2):uint(), tvb(12, 2):uint()
    need(tvb, 14, qlen, "query")
    local what
    if qtype == 2 and qlen == 32 then
        tree:add(f.eid, tvb(14, 32))
        what = "EID " .. hex(tvb(14, 4)) .. "…"
    else
        local name = tvb(14, qlen):string(ENC_UTF_8)
        tree:add(f.name, tvb(14, qlen), name)
        what = string.format("name %q", name)
    end
    local token = dissect_options(tvb, tree, 14 + qlen, olen, nil)
    pinfo.cols.info:set(string.format("ResolveRequest tag=0x%08x %s%s", tvb(8, 4):uint(), what, token and " [token]" or ""))
    return 14 + qlen + olen
end

local function dissect_resolve_response(tvb, pinfo, tree)
    need(tvb, 0, 52, "ResolveResponse header")
    tree:add(f.reserved, tvb(4, 2))
    tree:add(f.name_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.eid, tvb(12, 32))
    tree:add(f.size, tvb(44, 8))
    local nlen = tvb(6, 2):uint()
    need(tvb, 52, nlen, "name")
    local name = ""
    if nlen > 0 then
        name = tvb(52, nlen):string(ENC_UTF_8)
        tree:add(f.name, tvb(52, nlen), name)
    end
    pinfo.cols.info:set(string.format("ResolveResponse tag=0x%08x %q: EID %s…, %s bytes", tvb(8, 4):uint(), name,
        hex(tvb(12, 4)), tostring(tvb(44, 8):uint64())))
    return 52 + nlen
end

local function dissect_list_request(tvb, pinfo, tree)
    need(tvb, 0, 18, "ListRequest header")
    tree:add(f.hop_limit, tvb(4, 1))
    tree:add(f.reserved, tvb(5, 3))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.list_cursor, tvb(12, 4))
    tree:add(f.options_length, tvb(16, 2))
    local olen = tvb(16, 2):uint()
    local token = dissect_options(tvb, tree, 18, olen, nil)
    pinfo.cols.info:set(string.format("ListRequest tag=0x%08x cursor %d%s", tvb(8, 4):uint(), tvb(12, 4):uint(), token and " [token]" or ""))
    return 18 + olen
end

local function dissect_list_response(tvb, pinfo, tree)
    need(tvb, 0, 20, "ListResponse header")
    local fl = tree:add(f.list_flags, tvb(4, 1))
    fl:add(f.list_more, tvb(4, 1))
    tree:add(f.reserved, tvb(5, 1))
    tree:add(f.list_count, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.list_cursor, tvb(12, 4))
    tree:add(f.list_total, tvb(16, 4))
    local at = 20
    local count = tvb(6, 2):uint()
    for i = 1, count do
        need(tvb, at, 42, "list entry")
        local nlen = tvb(at + 40, 2):uint()
        need(tvb, at + 42, nlen, "list entry name")
        local name = nlen > 0 and tvb(at + 42, nlen):string(ENC_UTF_8) or ""
        local e = tree:add(f.list_entry, tvb(at, 42 + nlen)):set_text(string.format("Entry %d: %s, %s bytes", i, name, tostring(tvb(at + 32, 8):uint64())))
        e:add(f.eid, tvb(at, 32))
        e:add(f.size, tvb(at + 32, 8))
        e:add(f.name_length, tvb(at + 40, 2))
        if nlen > 0 then
            e:add(f.name, tvb(at + 42, nlen), name)
        end
        at = at + 42 + nlen
    end
    pinfo.cols.info:set(string.format("ListResponse tag=0x%08x cursor %d: %d of %d entries%s", tvb(8, 4):uint(),
        tvb(12, 4):uint(), count, tvb(16, 4):uint(), bit32.band(tvb(4, 1):uint(), 1) ~= 0 and " [MORE]" or ""))
    return at
end

local function dissect_retry(tvb, pinfo, tree)
    need(tvb, 0, 12, "Retry header")
    tree:add(f.reserved, tvb(4, 2))
    tree:add(f.token_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    local tlen = tvb(6, 2):uint()
    need(tvb, 12, tlen, "token")
    if tlen < 1 or tlen > 64 then
        tree:add_proto_expert_info(ex_malformed, "a Retry's token is 1–64 bytes")
    end
    if tlen > 0 then
        tree:add(f.token, tvb(12, tlen))
        if tlen == 20 then
            tree:add(f.token_epoch, tvb(12, 4))
            tree:add(f.token_mac, tvb(16, 16))
        end
    end
    tree:add_proto_expert_info(ex_retry)
    pinfo.cols.info:set(string.format("Retry tag=0x%08x token %d bytes", tvb(8, 4):uint(), tlen))
    return 12 + tlen
end

local function dissect_proof_request(tvb, pinfo, tree)
    need(tvb, 0, 54, "ProofRequest header")
    local flags = request_flags(tvb, tree)
    tree:add(f.hop_limit, tvb(5, 1))
    tree:add(f.options_length, tvb(6, 2))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.eid, tvb(12, 32))
    tree:add(f.block, tvb(44, 8))
    tree:add(f.depth, tvb(52, 1))
    tree:add(f.reserved, tvb(53, 1))
    local olen = tvb(6, 2):uint()
    local token = dissect_options(tvb, tree, 54, olen, nil)
    pinfo.cols.info:set(string.format("ProofRequest tag=0x%08x EID %s… block %s depth %d%s%s", tvb(8, 4):uint(), hex(tvb(12, 4)),
        tostring(tvb(44, 8):uint64()), tvb(52, 1):uint(), bit32.band(flags, 0x04) ~= 0 and " [ORIGIN]" or "", token and " [token]" or ""))
    return 54 + olen
end

local function dissect_proof(tvb, pinfo, tree)
    need(tvb, 0, 60, "Proof header")
    tree:add(f.reserved, tvb(4, 1))
    tree:add(f.hops, tvb(5, 1))
    tree:add(f.proof_count, tvb(6, 1))
    tree:add(f.reserved, tvb(7, 1))
    tree:add(f.tag, tvb(8, 4))
    tree:add(f.eid, tvb(12, 32))
    tree:add(f.block, tvb(44, 8))
    local by = node_id(tvb(52, 8))
    tree:add(f.served_by, tvb(52, 8), by)
    local count = tvb(6, 1):uint()
    need(tvb, 60, 32 * count, "sibling CVs")
    for i = 0, count - 1 do
        tree:add(f.sibling, tvb(60 + 32 * i, 32)):prepend_text(string.format("[%d] ", i))
    end
    pinfo.cols.info:set(string.format("Proof tag=0x%08x block %s: %d sibling%s, served by %s, %d hop%s", tvb(8, 4):uint(),
        tostring(tvb(44, 8):uint64()), count, count == 1 and "" or "s", by, tvb(5, 1):uint(), tvb(5, 1):uint() == 1 and "" or "s"))
    return 60 + 32 * count
end

-- Each returns the datagram length its fields imply (PROTOCOL.md: exactly as long as that).
local DISSECT = {
    [0x01] = dissect_request,
    [0x02] = dissect_data,
    [0x03] = dissect_nack,
    [0x04] = dissect_resolve_request,
    [0x05] = dissect_resolve_response,
    [0x06] = dissect_list_request,
    [0x07] = dissect_list_response,
    [0x08] = dissect_retry,
    [0x09] = dissect_proof_request,
    [0x0a] = dissect_proof,
}

-- One rdtp datagram at the start of `tvb`; returns its length as its fields give it (or the
-- rest of the buffer if it cannot be decoded) and its Info text.
local function dissect_one(tvb, pinfo, tree)
    local t = tvb(3, 1):uint()
    local name = TYPES[t] or string.format("type 0x%02x", t)
    local root = tree:add(rdtp, tvb(), string.format("rdtp %s", name))
    root:add(f.magic, tvb(0, 2))
    root:add(f.version, tvb(2, 1))
    root:add(f.type, tvb(3, 1))
    local version = tvb(2, 1):uint()
    if version ~= VERSION then
        root:add_proto_expert_info(ex_version, string.format("wire version %d (this dissector decodes %d)", version, VERSION))
        return tvb:len(), string.format("rdtp version %d %s (not decoded)", version, name)
    end
    local dissect = DISSECT[t]
    if not dissect then
        root:add_proto_expert_info(ex_unknown)
        return tvb:len(), string.format("rdtp %s (not decoded)", name)
    end
    local ok, result = pcall(dissect, tvb, pinfo, root)
    if not ok then
        if type(result) == "table" and result.rdtp then
            root:add_proto_expert_info(ex_malformed, result.rdtp)
            return tvb:len(), tostring(pinfo.cols.info) .. " [Malformed: " .. result.rdtp .. "]"
        end
        error(result, 0)
    end
    root:set_len(math.min(result, tvb:len()))
    return result, tostring(pinfo.cols.info)
end

-- A UDP payload holds one rdtp datagram; a capture taken before UDP segmentation offload
-- (GSO: loopback, or the sender's own interface) shows a server's or router's burst of Data
-- as one buffer of datagrams back to back, each as long as its fields say. Anything left
-- that is not another rdtp datagram makes the datagram malformed (PROTOCOL.md: a datagram
-- is exactly as long as its fields say).
function rdtp.dissector(tvb, pinfo, tree)
    if tvb:len() < 4 or tvb(0, 2):uint() ~= 0x5244 then
        return 0
    end
    pinfo.cols.protocol:set("RDTP")
    local at, n, first, last_root = 0, 0, nil, nil
    while at < tvb:len() do
        local rest = tvb(at)
        if n > 0 and (rest:len() < 4 or rest(0, 2):uint() ~= 0x5244) then
            tree:add_proto_expert_info(ex_malformed, string.format("%d bytes after the last rdtp datagram", rest:len()))
            first = first .. " [Malformed: trailing bytes]"
            break
        end
        local len, info = dissect_one(rest:tvb(), pinfo, tree)
        n = n + 1
        first = first or info
        if len > rest:len() then
            tree:add_proto_expert_info(ex_malformed, string.format("fields give %d bytes, %d remain", len, rest:len()))
            first = first .. " [Malformed: length]"
            break
        end
        at = at + len
    end
    if n > 1 then
        first = first .. string.format(" (+%d more rdtp datagrams in this UDP GSO buffer)", n - 1)
    end
    pinfo.cols.info:set(first)
    return tvb:len()
end

-- On any UDP port: magic "RD", a version this format has had (1–3), a known type.
local function heuristic(tvb, pinfo, tree)
    if tvb:len() < 12 or tvb(0, 2):uint() ~= 0x5244 then
        return false
    end
    local version, t = tvb(2, 1):uint(), tvb(3, 1):uint()
    if version < 1 or version > VERSION or not TYPES[t] then
        return false
    end
    rdtp.dissector(tvb, pinfo, tree)
    return true
end

local udp = DissectorTable.get("udp.port")
for _, port in ipairs(PORTS) do
    udp:add(port, rdtp)
end
rdtp:register_heuristic("udp", heuristic)
