//! The router's upstream side, where it behaves as a receiver does: the requests it sends
//! its next hops for the units the pipelines could not answer ([`Router::forward_upstream`]:
//! as few requests as the range and size limits allow, each remembered under its own tag so
//! that a Nack or Retry answering it finds its units), resolve, list and proof requests
//! forwarded for downstreams (`control_next_hop` refuses what cannot go, `forward_control`
//! sends the rest and `on_control_response` passes the answer back), and the per-hop
//! address tokens: a Retry from a next hop leaves its token in the router's jar and the
//! refused request goes again with it, once (`on_retry`).
//!
//! It chooses no next hop for units (the strategy does) and answers nothing from the store
//! (the pipelines do).

use std::net::SocketAddr;

use crate::eid::Eid;
use crate::time::Time;
use crate::token::MAX_TOKEN_LEN;
use crate::wire::tlv::{address_token_len, extra_ranges_len, unit_ranges_into};
use crate::wire::{
    self, ByteRange, DATA_HEADER_LEN, ListRequest, NackCode, OptionsWriter, PacketType, ProofRequest, Query, Request,
    RequestFlags, ResolveRequest, ResolveResponse, Retry,
};

use super::hashing::{Map, TableHasher, map};
use super::limits::SOURCE_SHARE_DETAIL;
use super::limits::{SlotIx, Sourced};
use super::pit::PitKey;
use super::{LEARNED_EXPORT, MAX_HOP_LIMIT, MAX_RANGES, RESOLVE_ROOM, Router};

/// What an upstream request carries besides its units (copied from the downstream request
/// that caused it).
#[derive(Clone, Debug)]
pub(super) struct Upstream {
    pub(super) flags: RequestFlags,
    pub(super) hop_limit: u8,
    pub(super) nonce: u64,
    pub(super) eid: Eid,
    pub(super) unit: u16,
    /// Anticipated interests and annotations, this router's included (S3 §II-A); raw option
    /// items, empty if the request anticipated nothing.
    pub(super) annotations: Box<[u8]>,
}

/// An upstream request the router sent: what a Nack or Retry answering it refers to.
#[derive(Debug)]
pub(super) struct OutRequest {
    pub(super) next_hop: SocketAddr,
    pub(super) up: Upstream,
    pub(super) offsets: Vec<u64>,
    /// Already sent again after a Retry (a second Retry is not obeyed).
    pub(super) retried: bool,
    /// When it was sent, and whether a Data answering it gave the strategy its RTT sample.
    pub(super) sent: Time,
    pub(super) sampled: bool,
}

/// What a forwarded resolve or list asked.
#[derive(Clone, Debug)]
pub(super) enum ControlQuery {
    Name(Box<str>),
    Eid(Eid),
    List { cursor: u32 },
    Proof { flags: RequestFlags, eid: Eid, block: u64, depth: u8 },
}

impl ControlQuery {
    /// The EID a Nack refusing it echoes (zero for a name or a list).
    pub(super) fn eid(&self) -> Eid {
        match self {
            ControlQuery::Eid(e) | ControlQuery::Proof { eid: e, .. } => *e,
            _ => Eid::default(),
        }
    }
}

/// A forwarded resolve or list: where its answer goes, and what it was (to send it again
/// after a Retry).
#[derive(Debug)]
pub(super) struct Forwarded {
    pub(super) next_hop: SocketAddr,
    pub(super) downstream: SocketAddr,
    pub(super) tag: u32,
    pub(super) hop_limit: u8,
    pub(super) query: ControlQuery,
    pub(super) retried: bool,
    /// The downstream's slot ([`limits`]).
    pub(super) source: SlotIx,
}

impl Sourced for Forwarded {
    fn source(&self) -> SlotIx {
        self.source
    }
}

/// Lists of offsets kept for the next upstream requests, and the longest kept (a request of
/// 32 units; a list a request forgot when it expired costs no allocation the next time).
const SPARE_OFFSETS: usize = 1024;
const SMALL_OFFSETS: usize = 32;

/// Next hops whose address tokens are remembered.
const TOKENS: usize = 1024;

/// The address token each next hop issued to this router (hop by hop: a downstream's token
/// is never forwarded), at most [`TOKENS`] of them.
#[derive(Debug)]
pub(super) struct TokenJar(Map<SocketAddr, Box<[u8]>>);

impl TokenJar {
    pub(super) fn new(h: &TableHasher) -> Self {
        TokenJar(map(h))
    }

    /// The token `hop` issued, if any.
    pub(super) fn get(&self, hop: SocketAddr) -> Option<&[u8]> {
        self.0.get(&hop).map(|t| &t[..])
    }

    /// The token `from` issued to this router, kept for later requests.
    pub(super) fn keep(&mut self, from: SocketAddr, token: &[u8]) {
        if self.0.len() >= TOKENS && !self.0.contains_key(&from) {
            // Forget one: the next request to that hop pays a Retry again.
            let victim = *self.0.keys().next().expect("non-empty");
            self.0.remove(&victim);
        }
        self.0.insert(from, token.into());
    }
}

impl Router {
    /// Send the units at `offsets` (of `up`'s EID and unit) to `next_hop`, as few requests
    /// as the range and unit limits allow, with the token `next_hop` issued (if any).
    pub(super) fn forward_upstream(
        &mut self,
        now: Time,
        next_hop: SocketAddr,
        up: &Upstream,
        offsets: &[u64],
        retried: bool,
    ) {
        let max_units = (self.max_units_per_request as usize).max(1);
        // Most ranges that fit the reply limit as well (a full request of unit-sized ranges).
        let by_bytes = self.max_reply_bytes / (u64::from(up.unit) + DATA_HEADER_LEN as u64);
        let max_units = max_units.min(by_bytes.max(1) as usize);
        let mut rest = offsets;
        let mut ranges = std::mem::take(&mut self.ranges);
        while !rest.is_empty() {
            let used = unit_ranges_into(rest.iter().copied(), u32::from(up.unit), MAX_RANGES, max_units, &mut ranges);
            let (sent, later) = rest.split_at(used);
            rest = later;
            let tag = self.new_tag();
            let mut opts = [0u8; extra_ranges_len(MAX_RANGES)
                + address_token_len(Some(&[0; MAX_TOKEN_LEN]))
                + crate::wire::annotation::MAX_AREA];
            let options = OptionsWriter::new(&mut opts)
                .extra_ranges(&ranges[1..])
                .address_token(self.tokens.get(next_hop))
                .items(&up.annotations)
                .finish();
            let req = Request {
                flags: up.flags,
                hop_limit: up.hop_limit,
                unit: up.unit,
                tag,
                nonce: up.nonce,
                eid: up.eid,
                range: ranges[0],
                options,
            };
            self.enqueue(next_hop, req.encoded_len(), |b| req.encode(b).ok());
            self.stats.upstream_requests += 1;
            self.liveness.sent(now, next_hop);
            for &o in sent {
                if let Some(e) = self.pit.get_mut(&PitKey { eid: up.eid, offset: o, unit: up.unit }) {
                    e.note_forwarded(tag, next_hop, now);
                }
            }
            let mut offsets = self.spare_offsets.pop().unwrap_or_default();
            offsets.extend_from_slice(sent);
            let record = OutRequest { next_hop, up: up.clone(), offsets, retried, sent: now, sampled: false };
            if self.upstream.is_full() {
                // Forget the oldest: a Nack answering it will find nothing (its units expire).
                if let Some((_, o)) = self.upstream.pop_expired(Time::MAX) {
                    self.recycle_offsets(o.offsets);
                }
            }
            let _ = self.upstream.insert(tag, record, now + self.lifetime);
        }
        self.ranges = ranges;
    }

    /// Keep the list of offsets of an upstream request that was forgotten, for the next
    /// (small lists only, and a bounded number of them: memory stays what it was without).
    pub(super) fn recycle_offsets(&mut self, mut offsets: Vec<u64>) {
        if self.spare_offsets.len() < SPARE_OFFSETS && offsets.capacity() <= SMALL_OFFSETS {
            offsets.clear();
            self.spare_offsets.push(offsets);
        }
    }

    pub(super) fn on_resolve(&mut self, now: Time, from: SocketAddr, r: &ResolveRequest<'_>) {
        self.stats.resolves += 1;
        let (eid, next_hop) = match r.query {
            Query::Name(n) => (Eid::default(), self.fib.route_name(n)),
            Query::Eid(e) => (e, self.fib.route_eid(&e)),
        };
        let Some((next_hop, source)) = self.control_next_hop(now, from, r.hop_limit, r.tag, eid, next_hop) else {
            return;
        };
        let query = match r.query {
            Query::Name(n) => ControlQuery::Name(n.into()),
            Query::Eid(e) => ControlQuery::Eid(e),
        };
        let hop_limit = forwarded_hop_limit(r.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: r.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, eid, pending);
    }

    /// A proof request (verified streaming): answered here if this router knows every
    /// sibling asked for (nodes of blocks it verified, [`verify`]) and the request does not
    /// say ORIGIN; otherwise it goes where the EID's requests go.
    pub(super) fn on_proof_request(&mut self, now: Time, from: SocketAddr, p: &ProofRequest<'_>) {
        self.stats.proofs += 1;
        if !p.flags.contains(RequestFlags::ORIGIN)
            && let Some(siblings) = self.staging.siblings(p.eid, p.block, p.depth)
        {
            let proof = wire::Proof {
                hops: 0,
                tag: p.tag,
                eid: p.eid,
                block: p.block,
                served_by: self.id,
                siblings: &siblings,
            };
            self.enqueue(from, proof.encoded_len(), |b| proof.encode(b).ok());
            self.stats.proofs_served += 1;
            return;
        }
        let route = self.fib.route_eid(&p.eid);
        let Some((next_hop, source)) = self.control_next_hop(now, from, p.hop_limit, p.tag, p.eid, route) else {
            return;
        };
        let query = ControlQuery::Proof { flags: p.flags, eid: p.eid, block: p.block, depth: p.depth };
        let hop_limit = forwarded_hop_limit(p.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: p.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, p.eid, pending);
    }

    pub(super) fn on_list(&mut self, now: Time, from: SocketAddr, l: &ListRequest) {
        self.stats.lists += 1;
        let route = self.fib.default_route();
        let Some((next_hop, source)) = self.control_next_hop(now, from, l.hop_limit, l.tag, Eid::default(), route)
        else {
            return;
        };
        let query = ControlQuery::List { cursor: l.cursor };
        let hop_limit = forwarded_hop_limit(l.hop_limit);
        let pending = Forwarded { next_hop, downstream: from, tag: l.tag, hop_limit, query, retried: false, source };
        self.forward_control(now, Eid::default(), pending);
    }

    /// The next hop of a resolve, list or proof request (and the slot of the source it is
    /// charged to), or `None` after refusing it: hop limit, no route, a route back to `from`
    /// (never forwarded back where it came from), a next hop presumed dead, a full table or
    /// the source's share used up ([`limits`]).
    fn control_next_hop(
        &mut self,
        now: Time,
        from: SocketAddr,
        hop_limit: u8,
        tag: u32,
        eid: Eid,
        route: Option<SocketAddr>,
    ) -> Option<(SocketAddr, SlotIx)> {
        let range = ByteRange::new(0, 0);
        let silent;
        let refusal = match route {
            _ if hop_limit == 0 => {
                self.stats.hop_limit += 1;
                (NackCode::HopLimit, "hop limit reached (a routing loop, or a path too long)")
            }
            None => {
                self.stats.no_route += 1;
                (NackCode::NoRoute, "no route for this name")
            }
            Some(a) if a == from => {
                self.stats.no_route += 1;
                (NackCode::NoRoute, "the route leads back where the request came from")
            }
            Some(a) if self.liveness.refuses(a) => {
                self.stats.no_route += 1;
                silent = self.silent_detail(a);
                (NackCode::NoRoute, silent.as_str())
            }
            Some(_) if self.control.is_full() => {
                self.stats.busy += 1;
                (NackCode::Busy, "too many forwarded requests pending")
            }
            Some(a) => {
                let s = self.limiter.ask(now, from);
                if s.may_forward && self.limiter.may_hold_more(&self.control, s.slot, s.active) {
                    self.limiter.charge(s.slot, 1);
                    return Some((a, s.slot));
                }
                self.stats.busy += 1;
                self.stats.source_limited += 1;
                (NackCode::Busy, SOURCE_SHARE_DETAIL)
            }
        };
        self.send_nack(from, refusal.0, tag, eid, range, self.id, 0, refusal.1);
        None
    }

    /// Send a resolve or list upstream under a new tag (with the next hop's token) and
    /// remember where its answer goes.
    fn forward_control(&mut self, now: Time, eid: Eid, pending: Forwarded) {
        let tag = self.new_tag();
        const OPTS: usize = address_token_len(Some(&[0; MAX_TOKEN_LEN]));
        let mut opts = [0u8; OPTS];
        let options = OptionsWriter::new(&mut opts).address_token(self.tokens.get(pending.next_hop)).finish();
        let hop_limit = pending.hop_limit;
        let next_hop = pending.next_hop;
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.resize(wire::LIST_REQUEST_LEN + RESOLVE_ROOM + OPTS, 0);
        let len = match &pending.query {
            ControlQuery::Name(n) => ResolveRequest { hop_limit, tag, query: Query::Name(n), options }.encode(&mut b),
            ControlQuery::Eid(e) => ResolveRequest { hop_limit, tag, query: Query::Eid(*e), options }.encode(&mut b),
            ControlQuery::List { cursor } => ListRequest { hop_limit, tag, cursor: *cursor, options }.encode(&mut b),
            ControlQuery::Proof { flags, eid, block, depth } => {
                ProofRequest { flags: *flags, hop_limit, tag, eid: *eid, block: *block, depth: *depth, options }
                    .encode(&mut b)
            }
        };
        let (downstream, their_tag) = (pending.downstream, pending.tag);
        match len {
            Ok(n) if self.control.insert(tag, pending, now + self.lifetime).is_ok() => {
                b.truncate(n);
                self.queue.push_back((next_hop, b));
                self.liveness.sent(now, next_hop);
            }
            _ => {
                self.recycle(b);
                self.send_nack(downstream, NackCode::Busy, their_tag, eid, ByteRange::new(0, 0), self.id, 0, "busy");
            }
        }
    }

    /// A Retry from upstream: the next hop wants its token. Keep it and send the refused
    /// request again with it, once; its pending units keep their downstreams.
    pub(super) fn on_retry(&mut self, now: Time, from: SocketAddr, r: &Retry<'_>) {
        if let Some((key, a)) = self.own_proofs.take_for_retry(r.tag, from) {
            self.stats.retries_in += 1;
            self.tokens.keep(from, r.token);
            self.send_proof_request(now, key, a);
            return;
        }
        let out = self.upstream.get(&r.tag).is_some_and(|o| o.next_hop == from && !o.retried);
        let control = self.control.get(&r.tag).is_some_and(|c| c.next_hop == from && !c.retried);
        if !out && !control {
            self.stats.unsolicited += 1;
            return;
        }
        self.stats.retries_in += 1;
        self.tokens.keep(from, r.token);
        if out {
            let Some(o) = self.upstream.remove(&r.tag) else { return };
            let up = o.up;
            // Only units still waiting for this request go again (with the annotations they
            // went with the first time).
            let offsets: Vec<u64> = o
                .offsets
                .into_iter()
                .filter(|&off| {
                    self.pit
                        .get(&PitKey { eid: up.eid, offset: off, unit: up.unit })
                        .is_some_and(|e| e.answered_by(r.tag, from))
                })
                .collect();
            self.forward_upstream(now, from, &up, &offsets, true);
        } else if let Some(mut c) = self.control.remove(&r.tag) {
            c.retried = true;
            let eid = c.query.eid();
            self.forward_control(now, eid, c);
        }
    }

    /// The answer to a forwarded resolve or list (or a Nack refusing one).
    pub(super) fn on_control_response(
        &mut self,
        from: SocketAddr,
        tag: u32,
        resolved: Option<&ResolveResponse<'_>>,
        d: &[u8],
    ) {
        if self.control.get(&tag).is_none_or(|c| c.next_hop != from) {
            self.stats.unsolicited += 1;
            return;
        }
        let Some(c) = self.control.remove(&tag) else { return };
        if let Some(r) = resolved {
            self.fib.learn(r.eid, from);
            if let Some(out) = self.learned.as_mut() {
                if out.len() >= LEARNED_EXPORT {
                    out.pop_front();
                }
                out.push_back((r.eid, from));
            }
        }
        let ty = wire::check_prefix(d);
        let is_nack = matches!(ty, Ok(PacketType::Nack));
        if is_nack {
            self.stats.nacks_out += 1;
        }
        let counts_hops = is_nack || matches!(ty, Ok(PacketType::Proof));
        self.enqueue(c.downstream, d.len(), |b| {
            b.copy_from_slice(d);
            wire::rewrite_response(b, c.tag);
            if counts_hops {
                wire::set_hops(b, d[wire::HOPS_AT].saturating_add(1));
            }
            Some(d.len())
        });
    }
}

/// The hop limit a request (resolve, list, proof request) that arrived with `h` ≥ 1 is
/// forwarded with: one less, and never more than [`MAX_HOP_LIMIT`] − 1.
pub(super) fn forwarded_hop_limit(h: u8) -> u8 {
    h.min(MAX_HOP_LIMIT).saturating_sub(1)
}
