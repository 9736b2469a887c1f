//! The stateless server (seed 000 §3.2: "the functionality of sender is simple that it just
//! sends byte fragments according to the information – EID, offset and length – carried in
//! the requests").
//!
//! [`Server`] keeps **no per-receiver state**: everything needed to answer a request is in
//! the request. It holds its configuration and aggregate counters only, so its memory does
//! not grow with the number of receivers.
//!
//! # Address validation
//!
//! A request whose source address has not been validated — it carries no valid
//! `ADDRESS_TOKEN` — is answered with a [`Retry`] carrying a token, never with content
//! ([`crate::token`]; RFC 9000 §8). Everything sent toward such an address is at most three
//! times the bytes of the datagram that came from it, so a spoofed request cannot turn the
//! server into an amplifier. Requests with a valid token are answered in full, up to
//! [`ServerConfig::max_reply_bytes`].
//!
//! # Call contract
//!
//! For each datagram that arrives from `from` at `now`:
//!
//! 1. `let mut reply = server.handle(now, from, &catalog, datagram);`
//! 2. `while let Some(n) = reply.next_datagram(&mut buf) { send(&buf[..n]) }` — to `from`.
//!    `buf` must hold [`Server::max_datagram_size`] bytes for the request's unit; 65 536
//!    bytes always suffice.
//!
//! The Data packets of one request come out back to back (server pacing comes later).
//! [`ServerNode`] drives the same core under the contract of every other core
//! ([`crate::node::Node`]), for hosts that move datagrams for several kinds of node.
//! Malformed input never panics: it is dropped (not rdtp) or answered with a Nack.

mod catalog;
pub mod node;
mod share;

pub use catalog::{Catalog, Content, Index, MemoryCatalog, Pattern, PatternCatalog, ReadError, fill_pattern};
pub use node::ServerNode;
pub(crate) use share::Budget;
pub use share::ShareConfig;

use std::net::SocketAddr;

use crate::eid::Eid;
use crate::node::NodeId;
use crate::time::Time;
use crate::token::{MalformedAnswer, TOKEN_LEN, ValidationConfig, Validator};
use crate::wire::{
    ByteRange, DATA_HEADER_LEN, DEFAULT_MAX_REPLY_BYTES, Data, DataFlags, DecodeError, LIST_MAX_DATAGRAM, ListRequest,
    ListResponseBuilder, Nack, NackCode, Options, Packet, PacketType, Query, Ranges, Request, ResolveRequest,
    ResolveResponse, Retry,
};
use crate::wire::{Proof, ProofRequest};

/// Server limits.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// This server's node id, sent in every Data (`served_by`) and Nack (`from`).
    pub id: NodeId,
    /// Most units one request may ask for, over all its ranges; larger requests get a
    /// `TooLarge` Nack.
    pub max_units_per_request: u32,
    /// Most bytes of Data (headers included) one request may be answered with; larger
    /// requests get a `TooLarge` Nack. The unit count alone would let a 66-byte request
    /// ask for 256 units of 65 437 bytes.
    pub max_reply_bytes: u64,
    /// Address validation (tokens, the 3× limit toward unvalidated addresses).
    pub validation: ValidationConfig,
    /// The send budget and its fair share between sources ([`share`]; off by default): the
    /// total of this server, which all its cores share ([`Server::worker`]).
    pub share: ShareConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        // Receivers aggregate at most L = 64 units (seed 000 §4.2), ×3 for bbr-wifi is
        // clipped to L as well; 256 leaves room for re-requests carrying extra ranges.
        ServerConfig {
            id: NodeId::ORIGIN,
            max_units_per_request: 256,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            validation: ValidationConfig::default(),
            share: ShareConfig::default(),
        }
    }
}

/// Aggregate counters (not per receiver).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ServerStats {
    pub requests: u64,
    pub data_packets: u64,
    pub data_bytes: u64,
    pub nacks: u64,
    pub resolves: u64,
    pub lists: u64,
    /// Datagrams that were not rdtp, or rdtp packets a server does not take (Data, …).
    pub dropped: u64,
    /// Requests refused as malformed.
    pub malformed: u64,
    /// Requests from unvalidated addresses answered with a Retry (a token).
    pub retries: u64,
    /// Proof requests (verified streaming).
    pub proofs: u64,
    /// Requests refused with `Busy`: their source was over its share of the send budget.
    pub busy: u64,
}

crate::impl_add!(ServerStats {
    requests,
    data_packets,
    data_bytes,
    nacks,
    resolves,
    lists,
    dropped,
    malformed,
    retries,
    proofs,
    busy
});

/// The stateless server core. A server that serves on several threads runs one core per
/// thread, made with [`Server::worker`].
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    validator: Validator,
    share: share::Budget,
    stats: ServerStats,
}

impl Default for Server {
    fn default() -> Self {
        Server::new(ServerConfig::default())
    }
}

impl Server {
    pub fn new(config: ServerConfig) -> Self {
        Server {
            validator: Validator::new(config.validation.clone()),
            share: share::Budget::new(config.share.clone()),
            config,
            stats: ServerStats::default(),
        }
    }

    /// Another core of the same server, for another thread: the same configuration (so the
    /// same token secret: a token either core issued is valid at both), its own counters,
    /// and **the same send budget** — [`ShareConfig::rate`] is the server's total however
    /// many cores serve it, and each source's share is counted across all of them.
    pub fn worker(&self) -> Server {
        Server {
            validator: Validator::new(self.config.validation.clone()),
            share: self.share.clone(),
            config: self.config.clone(),
            stats: ServerStats::default(),
        }
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    pub fn stats(&self) -> &ServerStats {
        &self.stats
    }

    /// Sources that asked for Data recently, from any core of this server (as the fair
    /// share last counted them; 0 when no send budget is configured).
    pub fn active_sources(&self) -> usize {
        self.share.active()
    }

    /// Largest datagram a reply to a request with this `unit` can produce.
    pub fn max_datagram_size(unit: u16) -> usize {
        (DATA_HEADER_LEN + crate::wire::annotation::MAX_AREA + usize::from(unit))
            .max(LIST_MAX_DATAGRAM)
            .max(crate::wire::NACK_HEADER_LEN + crate::wire::NACK_MAX_DETAIL)
    }

    /// Take one datagram from `from` at `now`; the returned [`Reply`] yields the datagrams
    /// to send back to `from`.
    pub fn handle<'a, C: Catalog + ?Sized>(
        &'a mut self,
        now: Time,
        from: SocketAddr,
        catalog: &'a C,
        datagram: &'a [u8],
    ) -> Reply<'a, C> {
        let kind = self.classify(now, from, catalog, datagram);
        Reply { kind, catalog, id: self.config.id, stats: &mut self.stats }
    }

    fn classify<'a, C: Catalog + ?Sized>(
        &mut self,
        now: Time,
        from: SocketAddr,
        catalog: &'a C,
        datagram: &'a [u8],
    ) -> ReplyKind<'a> {
        // What an unvalidated source may be sent: a blank Nack only if it fits.
        let budget = self.validator.budget(datagram.len());
        let blank = |this: &mut Self, code, detail| match NackInfo::blank(code, detail).fitting(budget) {
            Some(n) => ReplyKind::Nack(n),
            None => {
                this.stats.dropped += 1;
                ReplyKind::Nothing
            }
        };
        let ty = match crate::wire::check_prefix(datagram) {
            Ok(ty) => ty,
            Err(DecodeError::UnsupportedVersion(_))
                if datagram.get(3).is_some_and(|&t| PacketType::is_request_byte(t)) =>
            {
                return blank(self, NackCode::UnsupportedVersion, crate::wire::UNSUPPORTED_VERSION_DETAIL);
            }
            Err(_) => {
                self.stats.dropped += 1;
                return ReplyKind::Nothing;
            }
        };
        let packet = match Packet::decode(datagram) {
            Ok(p) => p,
            Err(e) => {
                if ty.is_request() {
                    self.stats.malformed += 1;
                    let detail = malformed_detail(&e);
                    return match crate::wire::attribute(datagram) {
                        Some(a) => self.answer_malformed(now, from, datagram.len(), a, detail),
                        None => blank(self, NackCode::Malformed, detail),
                    };
                }
                self.stats.dropped += 1;
                return ReplyKind::Nothing;
            }
        };
        let (tag, token) = match &packet {
            Packet::Request(r) => (r.tag, r.options.address_token()),
            Packet::ResolveRequest(r) => (r.tag, r.options.address_token()),
            Packet::ListRequest(l) => (l.tag, l.options.address_token()),
            Packet::ProofRequest(p) => (p.tag, p.options.address_token()),
            _ => {
                self.stats.dropped += 1;
                return ReplyKind::Nothing;
            }
        };
        if !self.validator.is_valid(now, from, token) {
            // RFC 9000 §8.1: a token instead of an answer (32 bytes: less than any request).
            self.stats.retries += 1;
            return ReplyKind::Retry { tag, token: self.validator.issue(now, from) };
        }
        match packet {
            Packet::Request(req) => self.classify_request(now, from, catalog, req),
            Packet::ResolveRequest(r) => {
                self.stats.resolves += 1;
                classify_resolve(catalog, r)
            }
            Packet::ListRequest(l) => {
                self.stats.lists += 1;
                ReplyKind::List(l)
            }
            Packet::ProofRequest(p) => {
                self.stats.proofs += 1;
                classify_proof(catalog, p)
            }
            _ => unreachable!("only requests reach here"),
        }
    }

    /// A request that does not decode but names its tag (issue 23, item 12): a Nack
    /// `Malformed` its sender can attribute, within the amplification budget toward an
    /// unvalidated address ([`Validator::answer_malformed`]).
    fn answer_malformed<'a>(
        &mut self,
        now: Time,
        from: SocketAddr,
        received: usize,
        a: crate::wire::Attribution<'_>,
        detail: &'static str,
    ) -> ReplyKind<'a> {
        let nack = NackInfo { code: NackCode::Malformed, tag: a.tag, eid: a.eid, range: a.range, detail };
        match self.validator.answer_malformed(now, from, a.token, received, nack.encoded_len()) {
            MalformedAnswer::Nack => ReplyKind::Nack(nack),
            MalformedAnswer::Retry(token) => {
                self.stats.retries += 1;
                ReplyKind::Retry { tag: a.tag, token }
            }
            MalformedAnswer::Nothing => {
                self.stats.dropped += 1;
                ReplyKind::Nothing
            }
        }
    }

    fn classify_request<'a, C: Catalog + ?Sized>(
        &mut self,
        now: Time,
        from: SocketAddr,
        catalog: &'a C,
        req: Request<'a>,
    ) -> ReplyKind<'a> {
        self.stats.requests += 1;
        let echo =
            |code, detail| ReplyKind::Nack(NackInfo { code, tag: req.tag, eid: req.eid, range: req.range, detail });
        if let Err(why) = req.validate() {
            self.stats.malformed += 1;
            return echo(NackCode::Malformed, why);
        }
        // S3 §II-A: the answer's first Data carries the request's anticipated interests and
        // router annotations back, with its nonce (no larger than the request's own options).
        let annotations = annotation_echo(&req);
        let reply_bytes = req
            .total_units()
            .saturating_mul(u64::from(req.unit) + DATA_HEADER_LEN as u64)
            .saturating_add(annotations.len() as u64);
        if req.total_units() > u64::from(self.config.max_units_per_request) || reply_bytes > self.config.max_reply_bytes
        {
            return echo(NackCode::TooLarge, "request asks for more than this server serves per request");
        }
        let Some(size) = catalog.size_of(&req.eid) else {
            return echo(NackCode::UnknownContent, "no object with this EID");
        };
        if !self.share.admit(now, from, reply_bytes) {
            self.stats.busy += 1;
            return echo(NackCode::Busy, "over this source's share of the server's send budget");
        }
        ReplyKind::Data(DataCursor {
            annotations,
            tag: req.tag,
            eid: req.eid,
            unit: u64::from(req.unit),
            size,
            primary: Some(req.range),
            extra: req.options.extra_ranges(),
            next: 0,
            end: 0,
        })
    }
}

/// The options the first Data answering `req` carries (S3 §II-A): its `ANTICIPATED` list and
/// router annotations, and its nonce; nothing if it anticipates nothing. The origin adds no
/// annotation of its own: it holds every unit, which a receiver infers from `served by`.
fn annotation_echo(req: &Request<'_>) -> Vec<u8> {
    if req.options.anticipated().next().is_none() {
        return Vec::new();
    }
    use crate::wire::annotation::{MAX_AREA, NONCE_ITEM_LEN, write_request_nonce};
    let mut v = Vec::with_capacity(MAX_AREA);
    req.options.copy_annotation_items(&mut v);
    let at = v.len();
    v.resize(at + NONCE_ITEM_LEN, 0);
    write_request_nonce(&mut v[at..], req.nonce);
    v
}

fn malformed_detail(e: &DecodeError) -> &'static str {
    match e {
        DecodeError::Truncated(what) | DecodeError::Invalid(what) => what,
        _ => "undecodable request",
    }
}

fn classify_resolve<'a, C: Catalog + ?Sized>(catalog: &'a C, r: ResolveRequest<'a>) -> ReplyKind<'a> {
    let found = match r.query {
        Query::Name(name) => catalog.resolve(name).map(|(eid, size)| (eid, size, name)),
        Query::Eid(eid) => catalog.size_of(&eid).map(|size| (eid, size, catalog.name_of(&eid).unwrap_or(""))),
    };
    match found {
        Some((eid, size, name)) => ReplyKind::Resolved(ResolveResponse { tag: r.tag, eid, size, name }),
        None => {
            let (eid, code, detail) = match r.query {
                Query::Eid(e) => (e, NackCode::UnknownContent, "no such name or EID"),
                // A file being (re)hashed: the receiver asks again on its resolve timer.
                Query::Name(name) if catalog.is_pending(name) => {
                    (Eid::default(), NackCode::Busy, "this name is being indexed; ask again shortly")
                }
                Query::Name(_) => (Eid::default(), NackCode::UnknownContent, "no such name or EID"),
            };
            ReplyKind::Nack(NackInfo { code, tag: r.tag, eid, range: ByteRange::new(0, 0), detail })
        }
    }
}

/// Issue 11 (verified streaming): the siblings of one block's path, from the object's
/// outboard (`crate::tree`).
fn classify_proof<'a, C: Catalog + ?Sized>(catalog: &'a C, p: ProofRequest<'a>) -> ReplyKind<'a> {
    let refuse = |code, detail| {
        let range = ByteRange::new(p.block.saturating_mul(crate::tree::BLOCK_LEN), 0);
        ReplyKind::Nack(NackInfo { code, tag: p.tag, eid: p.eid, range, detail })
    };
    if catalog.size_of(&p.eid).is_none() {
        return refuse(NackCode::UnknownContent, "no object with this EID");
    }
    let Some(outboard) = catalog.outboard(&p.eid) else {
        return refuse(NackCode::Internal, "this server keeps no hash tree for the object");
    };
    match outboard.proof(p.block, usize::from(p.depth)) {
        Some(cvs) => ReplyKind::Proof { tag: p.tag, eid: p.eid, block: p.block, cvs },
        None => refuse(NackCode::RangeBeyondEnd, "no such block, or the proof asked is deeper than its path"),
    }
}

struct NackInfo {
    code: NackCode,
    tag: u32,
    eid: Eid,
    range: ByteRange,
    detail: &'static str,
}

impl NackInfo {
    fn blank(code: NackCode, detail: &'static str) -> Self {
        NackInfo { code, tag: 0, eid: Eid::default(), range: ByteRange::new(0, 0), detail }
    }

    /// Bytes of this Nack on the wire.
    fn encoded_len(&self) -> usize {
        crate::wire::NACK_HEADER_LEN + crate::wire::cut_detail(self.detail, crate::wire::NACK_MAX_DETAIL).len()
    }

    /// This Nack with its detail cut to fit `max_len` bytes on the wire, if it can.
    fn fitting(self, max_len: usize) -> Option<Self> {
        let room = max_len.checked_sub(crate::wire::NACK_HEADER_LEN)?;
        Some(NackInfo { detail: crate::wire::cut_detail(self.detail, room), ..self })
    }
}

/// Position inside the ranges of one request. Lives only while that request is answered.
struct DataCursor<'a> {
    /// Options for the next Data (the annotation echo, first Data only).
    annotations: Vec<u8>,
    tag: u32,
    eid: Eid,
    unit: u64,
    size: u64,
    primary: Option<ByteRange>,
    /// The `EXTRA_RANGES` not reached yet (found once: walking them is linear, issue 23).
    extra: Ranges<'a>,
    /// Next byte to send in the current range, and its end (clipped to the object).
    next: u64,
    end: u64,
}

impl DataCursor<'_> {
    /// Advance to the next range. Returns a range that starts beyond the object (to Nack),
    /// or `None` when positioned on a servable range or when all ranges are done.
    fn next_range(&mut self) -> Option<Result<(), ByteRange>> {
        let range = match self.primary.take() {
            Some(r) => r,
            None => self.extra.next()?,
        };
        if range.offset >= self.size {
            return Some(Err(range));
        }
        self.next = range.offset;
        self.end = range.end().min(self.size);
        Some(Ok(()))
    }
}

enum ReplyKind<'a> {
    Nothing,
    Nack(NackInfo),
    Retry { tag: u32, token: [u8; TOKEN_LEN] },
    Resolved(ResolveResponse<'a>),
    List(ListRequest<'a>),
    Proof { tag: u32, eid: Eid, block: u64, cvs: Vec<crate::tree::Cv> },
    Data(DataCursor<'a>),
    Done,
}

/// The datagrams answering one incoming datagram. See the module docs for the call order.
pub struct Reply<'a, C: ?Sized> {
    kind: ReplyKind<'a>,
    catalog: &'a C,
    id: NodeId,
    stats: &'a mut ServerStats,
}

impl<C: Catalog + ?Sized> Reply<'_, C> {
    /// Whether this reply carries content (as opposed to nothing or one control packet).
    pub fn is_data(&self) -> bool {
        matches!(self.kind, ReplyKind::Data(_))
    }

    /// Write the next datagram into `buf`; `None` when the reply is complete.
    ///
    /// If `buf` is too small for the next datagram the reply ends early (`None`).
    pub fn next_datagram(&mut self, buf: &mut [u8]) -> Option<usize> {
        match core::mem::replace(&mut self.kind, ReplyKind::Done) {
            ReplyKind::Nothing | ReplyKind::Done => None,
            ReplyKind::Nack(n) => self.emit_nack(&n, buf),
            ReplyKind::Retry { tag, token } => Retry { tag, token: &token }.encode(buf).ok(),
            ReplyKind::Resolved(r) => r.encode(buf).ok(),
            ReplyKind::List(l) => self.emit_list(l, buf),
            ReplyKind::Proof { tag, eid, block, cvs } => {
                let siblings = cvs.concat();
                Proof { hops: 0, tag, eid, block, served_by: self.id, siblings: &siblings }.encode(buf).ok()
            }
            ReplyKind::Data(mut cur) => {
                let out = self.emit_data(&mut cur, buf);
                if out.is_some() {
                    self.kind = ReplyKind::Data(cur);
                }
                out
            }
        }
    }

    fn emit_nack(&mut self, n: &NackInfo, buf: &mut [u8]) -> Option<usize> {
        self.stats.nacks += 1;
        Nack {
            code: n.code,
            hops: 0,
            tag: n.tag,
            eid: n.eid,
            offset: n.range.offset,
            length: n.range.length,
            from: self.id,
            detail: n.detail,
        }
        .encode(buf)
        .ok()
    }

    fn emit_list(&mut self, l: ListRequest<'_>, buf: &mut [u8]) -> Option<usize> {
        let total = self.catalog.len();
        let mut b = ListResponseBuilder::new(buf).ok()?;
        let mut i = l.cursor as usize;
        while i < total {
            let Some(e) = self.catalog.entry(i) else { break };
            if !b.push(&e) {
                if b.count() == 0 {
                    i += 1; // an entry that can never fit is skipped, not looped on
                    continue;
                }
                break;
            }
            i += 1;
        }
        Some(b.finish(l.tag, l.cursor, u32::try_from(total).unwrap_or(u32::MAX), i < total))
    }

    fn emit_data(&mut self, cur: &mut DataCursor<'_>, buf: &mut [u8]) -> Option<usize> {
        while cur.next >= cur.end {
            match cur.next_range()? {
                Ok(()) => self.catalog.will_read(&cur.eid, cur.next, cur.end - cur.next),
                Err(beyond) => {
                    return self.emit_nack(
                        &NackInfo {
                            code: NackCode::RangeBeyondEnd,
                            tag: cur.tag,
                            eid: cur.eid,
                            range: beyond,
                            detail: "range starts at or after the end of the object",
                        },
                        buf,
                    );
                }
            }
        }
        let len = (cur.end - cur.next).min(cur.unit) as usize;
        let options = core::mem::take(&mut cur.annotations);
        let header_len = DATA_HEADER_LEN + options.len();
        let total = header_len + len;
        if buf.len() < total {
            return None;
        }
        if let Err(e) = self.catalog.read_at(&cur.eid, cur.next, &mut buf[header_len..total]) {
            let rest = ByteRange::new(cur.next, u32::try_from(cur.end - cur.next).unwrap_or(u32::MAX));
            cur.next = cur.end;
            cur.primary = None;
            cur.extra = Ranges::EMPTY; // stop after this Nack
            let (code, detail) = match e {
                // Changed under the transfer: the bytes there are not this EID's any more.
                ReadError::Gone => (NackCode::UnknownContent, "the object changed or was removed on the server"),
                ReadError::Failed(_) => (NackCode::Internal, "server failed to read the content"),
            };
            return self.emit_nack(&NackInfo { code, tag: cur.tag, eid: cur.eid, range: rest, detail }, buf);
        }
        let flags = DataFlags(0).with(DataFlags::LAST, cur.next + len as u64 == cur.size);
        let header = Data {
            flags,
            hops: 0,
            tag: cur.tag,
            eid: cur.eid,
            offset: cur.next,
            total_size: cur.size,
            served_by: self.id,
            options: Options::parse(&options).unwrap_or(Options::EMPTY),
            payload: &[],
        };
        header.encode_header(buf, len as u16).ok()?;
        cur.next += len as u64;
        self.stats.data_packets += 1;
        self.stats.data_bytes += len as u64;
        Some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tlv::{write_address_token, write_extra_ranges};
    use crate::wire::{ListEntry, RequestFlags, ResolveResponse};

    const CLIENT: &str = "192.0.2.10:4000";

    /// A server that answers every address (the tests of content, not of validation).
    fn open_server() -> Server {
        let validation = ValidationConfig { enabled: false, ..ValidationConfig::default() };
        Server::new(ServerConfig { validation, ..ServerConfig::default() })
    }

    fn catalog() -> MemoryCatalog {
        let content: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        MemoryCatalog::new([("obj".to_string(), content)])
    }

    fn request(eid: Eid, unit: u16, offset: u64, length: u32, opts: &[u8]) -> Vec<u8> {
        let req = Request {
            flags: RequestFlags(0),
            hop_limit: 1,
            unit,
            tag: 42,
            nonce: 9,
            eid,
            range: ByteRange::new(offset, length),
            options: Options::parse(opts).unwrap(),
        };
        let mut buf = vec![0u8; req.encoded_len()];
        req.encode(&mut buf).unwrap();
        buf
    }

    fn collect(server: &mut Server, cat: &impl Catalog, dgram: &[u8]) -> Vec<Vec<u8>> {
        collect_from(server, cat, Time::ZERO, CLIENT.parse().unwrap(), dgram)
    }

    fn collect_from(server: &mut Server, cat: &impl Catalog, now: Time, from: SocketAddr, d: &[u8]) -> Vec<Vec<u8>> {
        let mut reply = server.handle(now, from, cat, d);
        let mut out = vec![];
        let mut buf = vec![0u8; 65536];
        while let Some(n) = reply.next_datagram(&mut buf) {
            out.push(buf[..n].to_vec());
        }
        out
    }

    #[test]
    fn serves_units_back_to_back_and_clips_at_end() {
        let cat = catalog();
        let (eid, _) = cat.resolve("obj").unwrap();
        let mut s = open_server();
        // 4 units of 3000 from 3000: 3000..6000, ..9000, 9000..10000 (clipped), nothing more.
        let out = collect(&mut s, &cat, &request(eid, 3000, 3000, 12000, &[]));
        assert_eq!(out.len(), 3);
        let d: Vec<_> = out.iter().map(|b| Data::decode(b).unwrap()).collect();
        assert_eq!(d.iter().map(|d| d.offset).collect::<Vec<_>>(), [3000, 6000, 9000]);
        assert_eq!(d[2].payload.len(), 1000);
        assert!(d[2].flags.contains(DataFlags::LAST));
        assert!(!d[0].flags.contains(DataFlags::LAST));
        assert_eq!(d[1].payload[0], (6000 % 251) as u8);
        assert!(d.iter().all(|d| d.tag == 42 && d.total_size == 10_000));
        assert_eq!(s.stats().data_packets, 3);
    }

    #[test]
    fn extra_ranges_and_beyond_end() {
        let cat = catalog();
        let (eid, _) = cat.resolve("obj").unwrap();
        let mut s = open_server();
        let mut opts = [0u8; 64];
        let n = write_extra_ranges(&mut opts, &[ByteRange::new(20_000, 1000), ByteRange::new(5000, 2000)]);
        let out = collect(&mut s, &cat, &request(eid, 1000, 0, 1000, &opts[..n]));
        assert_eq!(out.len(), 4);
        assert_eq!(Data::decode(&out[0]).unwrap().offset, 0);
        let nack = Nack::decode(&out[1]).unwrap();
        assert_eq!((nack.code, nack.offset), (NackCode::RangeBeyondEnd, 20_000));
        assert_eq!(Data::decode(&out[2]).unwrap().offset, 5000);
        assert_eq!(Data::decode(&out[3]).unwrap().offset, 6000);
    }

    /// Each range the server serves is announced to the catalogue once, before its reads
    /// (`Catalog::will_read`), clipped to the object; a range beyond the end is not.
    #[test]
    fn every_served_range_is_announced_before_it_is_read() {
        let cat = Changing { inner: catalog(), changed_from: u64::MAX, log: Default::default() };
        let eid = eid_of(&cat.inner);
        let mut s = open_server();
        let mut opts = [0u8; 64];
        let n = write_extra_ranges(&mut opts, &[ByteRange::new(20_000, 1000), ByteRange::new(8000, 3000)]);
        let out = collect(&mut s, &cat, &request(eid, 1000, 0, 2000, &opts[..n]));
        assert_eq!(out.len(), 5); // 2 Data, a Nack beyond the end, 2 Data (the last clipped)
        let log = cat.log.borrow().clone();
        assert_eq!(
            log,
            [
                ('w', 0, 2000),
                ('r', 0, 1000),
                ('r', 1000, 1000),
                ('w', 8000, 2000),
                ('r', 8000, 1000),
                ('r', 9000, 1000)
            ]
        );
    }

    /// S3 §II-A: the first Data of the answer carries the list and the annotations back with
    /// the request's nonce; the other Data carry nothing extra.
    #[test]
    fn the_first_data_echoes_anticipated_interests_and_annotations() {
        use crate::wire::annotation::{Annotation, write_anticipated};
        let cat = catalog();
        let mut s = open_server();
        let mut opts = [0u8; 128];
        let mut n = write_anticipated(&mut opts, &[ByteRange::new(3000, 2000)]);
        let a = Annotation { node: NodeId::label("r1").unwrap(), time: 5, held: 0b10, hops: 0, flags: 0 };
        n += a.write(&mut opts[n..]);
        let out = collect(&mut s, &cat, &request(eid_of(&cat), 1000, 0, 3000, &opts[..n]));
        assert_eq!(out.len(), 3);
        let d: Vec<Data<'_>> = out.iter().map(|d| Data::decode(d).unwrap()).collect();
        assert_eq!(d[0].options.request_nonce(), Some(9));
        assert_eq!(d[0].options.anticipated().collect::<Vec<_>>(), [ByteRange::new(3000, 2000)]);
        assert_eq!(d[0].options.annotations().collect::<Vec<_>>(), [a]);
        assert!(d[1].options.raw().is_empty() && d[2].options.raw().is_empty());
        // Contents are unchanged by the options before them.
        let mut want = [0u8; 1000];
        cat.read_at(&eid_of(&cat), 0, &mut want).unwrap();
        assert_eq!(d[0].payload, want);
        assert!(out[0].len() <= Server::max_datagram_size(1000));
    }

    #[test]
    fn nacks_echo_the_request() {
        let cat = catalog();
        let (eid, _) = cat.resolve("obj").unwrap();
        let mut s = open_server();
        let cases = [
            (request(Eid([7; 32]), 1000, 0, 1000, &[]), NackCode::UnknownContent),
            (request(eid, 1000, 0, 1500, &[]), NackCode::Malformed),
            (request(eid, 1000, 0, 1000 * 257, &[]), NackCode::TooLarge),
        ];
        for (dgram, code) in cases {
            let out = collect(&mut s, &cat, &dgram);
            assert_eq!(out.len(), 1);
            let n = Nack::decode(&out[0]).unwrap();
            assert_eq!(n.code, code);
            assert_eq!(n.tag, 42);
            assert!(!n.detail.is_empty());
        }
    }

    #[test]
    fn resolve_list_and_garbage() {
        let cat = catalog();
        let mut s = open_server();
        let mut buf = [0u8; 64];
        let options = Options::EMPTY;
        let n = ResolveRequest { hop_limit: 1, tag: 5, query: Query::Name("obj"), options }.encode(&mut buf).unwrap();
        let out = collect(&mut s, &cat, &buf[..n]);
        let r = ResolveResponse::decode(&out[0]).unwrap();
        assert_eq!((r.tag, r.size, r.name), (5, 10_000, "obj"));
        let n = ResolveRequest { hop_limit: 1, tag: 6, query: Query::Name("nope"), options }.encode(&mut buf).unwrap();
        let out = collect(&mut s, &cat, &buf[..n]);
        assert_eq!(Nack::decode(&out[0]).unwrap().code, NackCode::UnknownContent);
        let n = ListRequest { hop_limit: 1, tag: 1, cursor: 0, options }.encode(&mut buf).unwrap();
        let out = collect(&mut s, &cat, &buf[..n]);
        let l = crate::wire::ListResponse::decode(&out[0]).unwrap();
        assert_eq!((l.total, l.len(), l.more), (1, 1, false));
        assert!(collect(&mut s, &cat, b"hello").is_empty());
        assert!(collect(&mut s, &cat, &out[0]).is_empty()); // responses are not answered
        let truncated = &request(Eid([1; 32]), 1000, 0, 1000, &[])[..30];
        let out = collect(&mut s, &cat, truncated);
        assert_eq!(Nack::decode(&out[0]).unwrap().code, NackCode::Malformed);
        // Another version's request: a Nack saying so, if it fits three times its size.
        let mut other = request(eid_of(&cat), 1000, 0, 1000, &[]);
        other[2] = 9;
        let out = collect(&mut s, &cat, &other);
        assert_eq!(Nack::decode(&out[0]).unwrap().code, NackCode::UnsupportedVersion);
        assert!(out[0].len() <= 3 * other.len());
        assert!(collect(&mut s, &cat, b"RD\x09\x01").is_empty(), "no Nack fits 12 bytes");
    }

    fn eid_of(cat: &MemoryCatalog) -> Eid {
        cat.resolve("obj").unwrap().0
    }

    /// RFC 9000 §8.1: an unvalidated address gets a Retry (never content), the token it
    /// carries opens the content, and only for the address it was issued to, for at most
    /// two periods.
    #[test]
    fn unvalidated_addresses_get_a_retry_then_content() {
        let cat = catalog();
        let eid = eid_of(&cat);
        let mut s = Server::default();
        let me: SocketAddr = CLIENT.parse().unwrap();
        let other: SocketAddr = "192.0.2.99:4000".parse().unwrap();
        let bare = request(eid, 1000, 0, 4000, &[]);
        let out = collect_from(&mut s, &cat, Time::ZERO, me, &bare);
        assert_eq!(out.len(), 1);
        assert!(out[0].len() <= 3 * bare.len());
        let Ok(Packet::Retry(r)) = Packet::decode(&out[0]) else { panic!("expected a Retry") };
        assert_eq!(r.tag, 42);
        let mut opts = [0u8; 80];
        let n = write_address_token(&mut opts, Some(r.token));
        let with_token = request(eid, 1000, 0, 4000, &opts[..n]);
        let data = collect_from(&mut s, &cat, Time::from_millis(5), me, &with_token);
        assert_eq!(data.len(), 4);
        assert!(data.iter().all(|d| Data::decode(d).is_ok()));
        // Same token from another address (spoofed, or stolen): a Retry again.
        let out = collect_from(&mut s, &cat, Time::from_millis(5), other, &with_token);
        assert!(matches!(Packet::decode(&out[0]), Ok(Packet::Retry(_))));
        // Two key periods later the token no longer opens anything.
        let later = Time::ZERO + 2 * s.config().validation.period;
        let out = collect_from(&mut s, &cat, later, me, &with_token);
        assert!(matches!(Packet::decode(&out[0]), Ok(Packet::Retry(_))));
        assert_eq!(s.stats().retries, 3);
        // A forged token of the right length: a Retry.
        let mut forged = r.token.to_vec();
        forged[7] ^= 0x20;
        let n = write_address_token(&mut opts, Some(&forged));
        let out = collect_from(&mut s, &cat, Time::from_millis(5), me, &request(eid, 1000, 0, 4000, &opts[..n]));
        assert!(matches!(Packet::decode(&out[0]), Ok(Packet::Retry(_))));
    }

    /// Issue 23, item 5: a host that shares the victim's IP address (a NAT, a multi-user
    /// machine) replays the token it got for its own port with the victim's port as source.
    /// It gets a Retry, never content: at most 3× its bytes toward a port that did not show
    /// it receives (0036bef answered in full, 11 777× on loopback). A client whose port
    /// changed (NAT rebinding) pays one Retry and then gets its content.
    #[test]
    fn a_token_names_the_port_too() {
        let cat = PatternCatalog::new([("big".to_string(), 64 << 20, 3)]);
        let eid = cat.resolve("big").unwrap().0;
        let mut s = Server::default();
        let neighbour: SocketAddr = "192.0.2.10:5000".parse().unwrap();
        let victim: SocketAddr = "192.0.2.10:4000".parse().unwrap();
        let units = (DEFAULT_MAX_REPLY_BYTES / (u64::from(crate::wire::MAX_UNIT) + DATA_HEADER_LEN as u64)) as u32;
        let big = |token: Option<&[u8]>| {
            let mut opts = [0u8; 80];
            let n = write_address_token(&mut opts, token);
            request(eid, crate::wire::MAX_UNIT, 0, units * u32::from(crate::wire::MAX_UNIT), &opts[..n])
        };
        let retry = collect_from(&mut s, &cat, Time::ZERO, neighbour, &big(None));
        let Ok(Packet::Retry(r)) = Packet::decode(&retry[0]) else { panic!("expected a Retry") };
        let token = r.token.to_vec();
        let own = collect_from(&mut s, &cat, Time::from_millis(1), neighbour, &big(Some(&token)));
        assert_eq!(own.len(), units as usize, "the token opens the content for its own port");
        // The same token from the victim's port: one Retry, within 3× of the request.
        let spoofed = big(Some(&token));
        let out = collect_from(&mut s, &cat, Time::from_millis(2), victim, &spoofed);
        assert_eq!(out.len(), 1);
        let Ok(Packet::Retry(fresh)) = Packet::decode(&out[0]) else { panic!("expected a Retry, got content") };
        let sent: usize = out.iter().map(Vec::len).sum();
        assert!(sent <= 3 * spoofed.len(), "{sent} bytes toward the victim's port for {}", spoofed.len());
        // That Retry's token is the victim's own: with it (a rebound client) content flows.
        let fresh = fresh.token.to_vec();
        let rebound = collect_from(&mut s, &cat, Time::from_millis(3), victim, &big(Some(&fresh)));
        assert_eq!(rebound.len(), units as usize);
    }

    /// Issue 23, item 12: a request that does not decode but names its tag is answered with
    /// a Nack `Malformed` carrying that tag (its sender can act on it at once), within 3×
    /// toward an unvalidated address: an empty name first gets a Retry (no Nack fits three
    /// times 14 bytes), then, with the token, the Nack; a 5 000-byte name gets the Nack at
    /// once. 0036bef answered both with nothing (a blank Nack, tag 0, did not fit the first;
    /// the second got one no receiver may act on), and the fetch waited for its timeout.
    #[test]
    fn malformed_requests_are_answered_with_their_tag() {
        let cat = catalog();
        let mut s = Server::default();
        let me: SocketAddr = CLIENT.parse().unwrap();
        // ResolveRequest::encode refuses bad names, so these are written by hand.
        let resolve = |name: &[u8], token: Option<&[u8]>| {
            let mut opts = [0u8; 80];
            let n = write_address_token(&mut opts, token);
            let mut d = vec![b'R', b'D', crate::wire::VERSION, 0x04, 1, 1];
            d.extend_from_slice(&(name.len() as u16).to_be_bytes());
            d.extend_from_slice(&77u32.to_be_bytes());
            d.extend_from_slice(&(n as u16).to_be_bytes());
            d.extend_from_slice(name);
            d.extend_from_slice(&opts[..n]);
            d
        };
        let nack_of = |out: &[Vec<u8>]| match out {
            [one] => Nack::decode(one).map(|n| (n.code, n.tag, n.detail.to_string())).ok(),
            _ => None,
        };
        // Empty name, no token (14 bytes): a Retry with the tag, within 3×.
        let bare = resolve(b"", None);
        let out = collect_from(&mut s, &cat, Time::ZERO, me, &bare);
        assert_eq!(out.len(), 1);
        assert!(out[0].len() <= 3 * bare.len());
        let Ok(Packet::Retry(r)) = Packet::decode(&out[0]) else { panic!("expected a Retry, got {out:?}") };
        assert_eq!(r.tag, 77);
        let token = r.token.to_vec();
        // With the token: the Nack, with the tag and the reason.
        let out = collect_from(&mut s, &cat, Time::from_millis(1), me, &resolve(b"", Some(&token)));
        assert_eq!(nack_of(&out), Some((NackCode::Malformed, 77, "empty name".to_string())));
        // A 5 000-byte name from an unvalidated address: the Nack at once (it fits 3×).
        let long = resolve(&[b'a'; 5000], None);
        let out = collect_from(&mut s, &cat, Time::from_millis(2), "192.0.2.99:1".parse().unwrap(), &long);
        assert_eq!(nack_of(&out), Some((NackCode::Malformed, 77, "name longer than 1024 bytes".to_string())));
        // A Request cut short keeps its tag, EID and range in the Nack.
        let mut cut = request(eid_of(&cat), 1000, 0, 1000, &[]);
        cut.pop();
        let out = collect_from(&mut s, &cat, Time::from_millis(3), me, &cut);
        let n = Nack::decode(&out[0]).unwrap();
        assert_eq!((n.code, n.tag, n.eid, n.offset, n.length), (NackCode::Malformed, 42, eid_of(&cat), 0, 1000));
        assert!(out[0].len() <= 3 * cut.len());
        // Too short to hold a tag: as before, a blank Nack if it fits, here nothing.
        assert!(collect_from(&mut s, &cat, Time::from_millis(4), me, &bare[..10]).is_empty());
    }

    /// A catalogue whose object changes under a transfer (a file overwritten in place) and
    /// whose names can be pending (being hashed); it logs announced ranges (`w`) and reads (`r`).
    struct Changing {
        inner: MemoryCatalog,
        /// Reads from this offset on find the object changed.
        changed_from: u64,
        log: core::cell::RefCell<Vec<(char, u64, u64)>>,
    }

    impl Catalog for Changing {
        fn size_of(&self, eid: &Eid) -> Option<u64> {
            self.inner.size_of(eid)
        }
        fn read_at(&self, eid: &Eid, offset: u64, buf: &mut [u8]) -> Result<(), ReadError> {
            self.log.borrow_mut().push(('r', offset, buf.len() as u64));
            if offset + buf.len() as u64 > self.changed_from {
                return Err(ReadError::Gone);
            }
            self.inner.read_at(eid, offset, buf)
        }
        fn will_read(&self, _: &Eid, offset: u64, len: u64) {
            self.log.borrow_mut().push(('w', offset, len));
        }
        fn resolve(&self, name: &str) -> Option<(Eid, u64)> {
            self.inner.resolve(name)
        }
        fn is_pending(&self, name: &str) -> bool {
            name == "being-hashed"
        }
        fn name_of(&self, eid: &Eid) -> Option<&str> {
            self.inner.name_of(eid)
        }
        fn len(&self) -> usize {
            self.inner.len()
        }
        fn entry(&self, index: usize) -> Option<ListEntry<'_>> {
            self.inner.entry(index)
        }
    }

    /// Issue 11, files that change: the bytes read before the change go out, then one
    /// `UnknownContent` Nack for the rest — never changed bytes, never `Internal`.
    #[test]
    fn an_object_that_changes_mid_reply_is_nacked_as_unknown() {
        let cat = Changing { inner: catalog(), changed_from: 2500, log: Default::default() };
        let eid = eid_of(&cat.inner);
        let mut s = open_server();
        let req = request(eid, 1000, 0, 4000, &[]);
        let mut reply = s.handle(Time::ZERO, CLIENT.parse().unwrap(), &cat, &req);
        let mut buf = vec![0u8; 65536];
        let mut out = vec![];
        while let Some(n) = reply.next_datagram(&mut buf) {
            out.push(buf[..n].to_vec());
        }
        assert_eq!(out.len(), 3, "two units, then one Nack");
        assert_eq!(Data::decode(&out[1]).unwrap().offset, 1000);
        let nack = Nack::decode(&out[2]).unwrap();
        assert_eq!((nack.code, nack.tag, nack.offset, nack.length), (NackCode::UnknownContent, 42, 2000, 2000));
        // A name being hashed is Busy (ask again), an unknown one UnknownContent.
        let mut b = [0u8; 64];
        let options = Options::EMPTY;
        for (name, code) in [("being-hashed", NackCode::Busy), ("nope", NackCode::UnknownContent)] {
            let n = ResolveRequest { hop_limit: 1, tag: 7, query: Query::Name(name), options }.encode(&mut b).unwrap();
            let mut reply = s.handle(Time::ZERO, CLIENT.parse().unwrap(), &cat, &b[..n]);
            let n = reply.next_datagram(&mut buf).unwrap();
            let nack = Nack::decode(&buf[..n]).unwrap();
            assert_eq!((nack.code, nack.tag), (code, 7), "{name}");
        }
    }

    /// Issue 23, item 9: a request's cost is linear in its size. A 63 kB request whose
    /// 20 000 empty options come before 255 extra ranges made the server scan the option
    /// area once per range (5.26 million items visited, 16 ms of CPU); now the area is
    /// walked once, when it is parsed, whatever the number of ranges.
    #[test]
    fn a_request_is_scanned_a_bounded_number_of_times_whatever_its_ranges() {
        let content: Vec<u8> = (0..256 * 64u32).map(|i| i as u8).collect();
        let cat = MemoryCatalog::new([("obj".to_string(), content)]);
        let eid = eid_of(&cat);
        const EMPTY_ITEMS: usize = 20_000;
        let mut opts = Vec::new();
        for _ in 0..EMPTY_ITEMS {
            opts.extend_from_slice(&[0x22, 0, 0]); // unknown, not critical: skipped
        }
        let ranges: Vec<ByteRange> = (1..256u64).map(|i| ByteRange::new(i * 64, 64)).collect();
        let at = opts.len();
        opts.resize(at + crate::wire::tlv::extra_ranges_len(ranges.len()), 0);
        write_extra_ranges(&mut opts[at..], &ranges);
        let dgram = request(eid, 64, 0, 64, &opts);
        assert!(dgram.len() > 63_000);
        let mut s = open_server();
        let before = crate::wire::tlv::work::items_visited();
        let out = collect(&mut s, &cat, &dgram);
        let visited = crate::wire::tlv::work::items_visited() - before;
        assert_eq!(out.len(), 256, "one Data per range");
        assert!(out.iter().all(|d| Data::decode(d).is_ok()));
        let items = EMPTY_ITEMS as u64 + 1;
        assert!(visited <= 4 * items, "{visited} option items visited for a request of {items} items");
    }

    /// 256 units of the largest unit would be 16 MiB for one 66-byte request: refused.
    #[test]
    fn replies_are_capped_in_bytes() {
        let cat = catalog();
        let mut s = open_server();
        let out = collect(&mut s, &cat, &request(eid_of(&cat), 60_000, 0, 60_000 * 20, &[]));
        assert_eq!(Nack::decode(&out[0]).unwrap().code, NackCode::TooLarge);
    }
}
