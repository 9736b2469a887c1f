//! The forwarding pipelines, named as NFD's forwarder names them (`daemon/fw/forwarder.cpp`):
//! a request from downstream enters [`Router::on_incoming_request`], each of its units is
//! looked up in the content store (`on_cs_hit` answers it, `on_cs_miss` joins it to a
//! pending entry or marks it for forwarding), and what must go upstream leaves through
//! `on_outgoing_request` to the next hops the forwarding strategy chose. Data from upstream
//! enters [`Router::on_incoming_data`] (or `on_data_unsolicited` when it answers nothing
//! pending), a Nack [`Router::on_incoming_nack`]; a next hop silent for too long refuses
//! what waits on it (`upstream_silent`).
//!
//! This file holds the pipelines only: it decides nothing about where a unit goes (the
//! strategy does), builds no upstream request (`upstream.rs`), checks no block
//! (`verify.rs`) and writes no datagram itself (`output.rs` queues them).

use std::net::SocketAddr;

use crate::eid::Eid;
use crate::node::NodeId;
use crate::time::Time;
use crate::wire::annotation::on_return;
use crate::wire::{self, ByteRange, DATA_HEADER_LEN, Data, DataFlags, Nack, NackCode, Options, Request, RequestFlags};

use super::annotate::Anticipation;
use super::limits::{self, SOURCE_SHARE_DETAIL, SlotIx};
use super::pit::PitKey;
use super::strategy::{Candidates, Pending};
use super::upstream::{Upstream, forwarded_hop_limit};
use super::{CachedUnit, Router, UNIT_SIZES};

impl Router {
    pub(super) fn on_incoming_request(&mut self, now: Time, from: SocketAddr, req: &Request<'_>) {
        self.stats.requests += 1;
        let refuse = |this: &mut Self, code, detail| {
            this.send_nack(from, code, req.tag, req.eid, req.range, this.id, 0, detail);
        };
        if let Err((code, why)) = self.check_request(req) {
            return refuse(self, code, why);
        }
        // The strategy chooses among the route's next hops (strategy.rs); the first is the
        // request's own.
        let mut hops = std::mem::take(&mut self.hops);
        hops.clear();
        let candidates = self.fib.next_hops_eid(&req.eid);
        if candidates.is_empty() {
            self.hops = hops;
            self.stats.no_route += 1;
            return refuse(self, NackCode::NoRoute, "no route for this EID");
        }
        let liveness = &self.liveness;
        let c = Candidates { now, from, hops: candidates, dead: &|h| liveness.refuses(h) };
        self.strategy.after_receive_request(&c, &mut hops);
        let Some(&next_hop) = hops.first() else {
            self.hops = hops;
            self.stats.no_route += 1;
            return refuse(self, NackCode::NoRoute, "the route for this EID leads back where the request came from");
        };
        self.note_unit_size(req.unit);
        let unit = u64::from(req.unit);
        // A source beyond its share of the forwarding rate, or holding all the pending
        // entries it may, is refused outright, as the server's fair share refuses (limits.rs):
        // one Busy per range, so that the receiver knows all its units lost.
        let standing = self.limiter.ask(now, from);
        if !standing.may_forward || !self.limiter.may_hold_more(&self.pit, standing.slot, standing.active) {
            self.stats.units_requested += req.total_units();
            self.stats.busy += req.total_units();
            self.stats.source_limited += req.total_units();
            for r in req.ranges() {
                self.send_nack(from, NackCode::Busy, req.tag, req.eid, r, self.id, 0, SOURCE_SHARE_DETAIL);
            }
            return;
        }
        let admit = Admit { slot: standing.slot, active: standing.active, hop_dead: self.liveness.refuses(next_hop) };
        // S3 §II-A: which anticipated units this store holds (looked at, not counted as lookups).
        let cs = self.cs.lock();
        let anticipation = Anticipation::of(req, self.id, now, |o| {
            cs.peek(&(req.eid, o)).is_some_and(|c: &CachedUnit| c.fits(o, unit))
        });
        drop(cs);
        let mut echo = anticipation.as_ref().map(Anticipation::echo);
        let mut forward = std::mem::take(&mut self.forward);
        let mut refused = std::mem::take(&mut self.refused);
        forward.clear();
        refused.clear();
        for r in req.ranges() {
            let mut offset = r.offset;
            while offset < r.end() {
                self.stats.units_requested += 1;
                match self.unit_requested(now, from, req, offset, &admit, &mut echo) {
                    Verdict::Served => {}
                    Verdict::Waiting => {}
                    Verdict::Forward => forward.push(offset),
                    Verdict::Refused(why) => refused.push((why, offset)),
                }
                offset += unit;
            }
        }
        self.limiter.charge(admit.slot, forward.len() as u64);
        let up = Upstream {
            flags: req.flags,
            hop_limit: forwarded_hop_limit(req.hop_limit),
            nonce: req.nonce,
            eid: req.eid,
            unit: req.unit,
            annotations: anticipation.as_ref().map(Anticipation::upstream).unwrap_or_default(),
        };
        self.on_outgoing_request(now, &hops, &up, &forward);
        self.hops = hops;
        self.refuse_units(from, req, &refused, next_hop);
        self.forward = forward;
        self.refused = refused;
    }

    /// Why `req` is refused before any of its units is looked at (counted), if it is:
    /// malformed, larger than this router answers, or out of hops.
    fn check_request(&mut self, req: &Request<'_>) -> Result<(), (NackCode, &'static str)> {
        if let Err(why) = req.validate() {
            self.stats.malformed += 1;
            return Err((NackCode::Malformed, why));
        }
        let reply_bytes = req.total_units().saturating_mul(u64::from(req.unit) + DATA_HEADER_LEN as u64);
        if req.total_units() > u64::from(self.max_units_per_request) || reply_bytes > self.max_reply_bytes {
            return Err((NackCode::TooLarge, "request asks for more than this router serves per request"));
        }
        if req.hop_limit == 0 {
            self.stats.hop_limit += 1;
            return Err((NackCode::HopLimit, "hop limit reached (a routing loop, or a path too long)"));
        }
        Ok(())
    }

    /// Nack the units of `req` that were refused (`(reason, offset)` in request order): one
    /// Nack per run of consecutive units with the same reason.
    fn refuse_units(&mut self, from: SocketAddr, req: &Request<'_>, refused: &[(Refusal, u64)], next_hop: SocketAddr) {
        let unit = u64::from(req.unit);
        let mut i = 0;
        while i < refused.len() {
            let (why, first) = refused[i];
            let mut n = 1;
            while refused.get(i + n).is_some_and(|&(w, o)| w == why && o == first + n as u64 * unit) {
                n += 1;
            }
            let range = ByteRange::new(first, u32::try_from(n as u64 * unit).unwrap_or(u32::MAX));
            let silent;
            let detail = match why {
                Refusal::Loop => "the request came back: routing loop",
                Refusal::TableFull => "pending-request table full",
                Refusal::SourceShare => SOURCE_SHARE_DETAIL,
                Refusal::HopDead => {
                    silent = self.silent_detail(next_hop);
                    &silent
                }
            };
            self.send_nack(from, why.code(), req.tag, req.eid, range, self.id, 0, detail);
            i += n;
        }
    }

    /// One unit of a downstream's request: answer it, join it to a pending entry, or mark
    /// it for forwarding (within the source's share, [`limits`], and unless the next hop is
    /// presumed dead, [`liveness`]). The first unit answered from the store carries `echo`
    /// (the request's anticipated interests and annotations, S3 §II-A), which is then used
    /// up.
    fn unit_requested(
        &mut self,
        now: Time,
        from: SocketAddr,
        req: &Request<'_>,
        offset: u64,
        admit: &Admit,
        echo: &mut Option<Vec<u8>>,
    ) -> Verdict {
        // ORIGIN: the receiver found a block it got wrong; the store may be what is wrong.
        if !req.flags.contains(RequestFlags::ORIGIN) && self.on_cs_hit(from, req, offset, echo) {
            return Verdict::Served;
        }
        self.on_cs_miss(now, from, req, offset, admit)
    }

    /// Answer one unit from the content store if it holds it (encoded straight from the
    /// store into a queued buffer: no copy of the payload besides the one into the
    /// datagram). The lookup counts as one hit or one miss in the store's own counters.
    fn on_cs_hit(&mut self, from: SocketAddr, req: &Request<'_>, offset: u64, echo: &mut Option<Vec<u8>>) -> bool {
        let unit = u64::from(req.unit);
        let Router { cs, pool, queue, stats, id, .. } = self;
        let mut store = cs.lock();
        let Some(c) = store.get(&(req.eid, offset)) else { return false };
        if !c.fits(offset, unit) {
            return false;
        }
        let options = echo.take().unwrap_or_default();
        let d = Data {
            flags: DataFlags(DataFlags::CACHED).with(DataFlags::LAST, offset + c.payload.len() as u64 == c.total_size),
            hops: 0,
            tag: req.tag,
            eid: req.eid,
            offset,
            total_size: c.total_size,
            served_by: *id,
            options: Options::parse(&options).unwrap_or(Options::EMPTY),
            payload: &c.payload,
        };
        let mut b = pool.pop().unwrap_or_default();
        b.clear();
        b.resize(d.encoded_len(), 0);
        if d.encode(&mut b).is_err() {
            return false;
        }
        queue.push_back((from, b));
        stats.cs_hits += 1;
        stats.data_out += 1;
        stats.bytes_out += d.payload.len() as u64;
        true
    }

    /// A unit the store could not answer: join it to its pending entry (forwarded again if
    /// the suppression interval lets it through, whoever asks and whether or not it is a
    /// re-request, as NFD's strategies decide: see below), or create the entry and mark it
    /// for forwarding.
    fn on_cs_miss(&mut self, now: Time, from: SocketAddr, req: &Request<'_>, offset: u64, admit: &Admit) -> Verdict {
        self.stats.cs_misses += 1;
        let key = PitKey { eid: req.eid, offset, unit: req.unit };
        // Further downstreams of all entries together are bounded too (as many as the table
        // has entries), so that the table's memory is bounded whatever the pattern: 65 536
        // entries of 64 downstreams each would be ≈ 200 MB (issue 23, item 2).
        let room_to_join = self.pit.joined() < self.pit.capacity();
        if let Some(e) = self.pit.get_mut(&key) {
            if e.is_loop(req.nonce, from) {
                self.stats.loops += 1;
                return Verdict::Refused(Refusal::Loop);
            }
            let max_waiting = if room_to_join { self.max_waiting } else { e.downstream.len() };
            let Some(new) = e.add_downstream(from, req.tag, max_waiting, now) else {
                self.stats.busy += 1;
                return Verdict::Refused(Refusal::TableFull);
            };
            e.note_nonce(req.nonce, from);
            // Forwarded again once the suppression interval has passed since the entry was
            // last forwarded, whoever asks: NFD's best-route asks its retransmission
            // suppression about every Interest that finds a pending entry
            // (`RetxSuppressionExponential::decidePerPitEntry`: suppressed within the interval
            // since the last out-record, forwarded after it), and an Interest carries no mark
            // of being a re-request. Forwarding only requests flagged RETRANSMISSION left a
            // unit whose request or Data was lost upstream waiting for the first asker's
            // re-request while everybody else's first-time requests joined it (seconds with
            // BBR-CD, which re-requests only after all its first-time requests: Hu et al.
            // §IV-D; docs/EXPERIMENTS.md §8c). The bound is the suppression's, per entry: a
            // flood of joins from any number of sources sends the unit upstream at most once
            // per interval, and each time it is paid from the asker's share (limits.rs), as a
            // re-request always was.
            let pending = Pending { last_forwarded: e.last_forwarded, reforwards: e.reforwards };
            let refire = self.strategy.retx_allowed(now, self.retx_suppression, pending) && !admit.hop_dead;
            if refire {
                e.reforwarded();
            }
            self.pit.set_expiry(&key, now + self.lifetime);
            if new {
                self.pit.note_joined();
            }
            if refire {
                self.stats.reforwarded_units += 1;
                return Verdict::Forward;
            }
            if new {
                self.stats.coalesced += 1;
            }
            return Verdict::Waiting;
        }
        if admit.hop_dead {
            self.stats.no_route += 1;
            return Verdict::Refused(Refusal::HopDead);
        }
        let slot = admit.slot;
        if !self.limiter.may_hold_more(&self.pit, slot, admit.active) {
            self.stats.busy += 1;
            self.stats.source_limited += 1;
            return Verdict::Refused(Refusal::SourceShare);
        }
        let entry = self.spare_lists.entry(from, req.tag, req.nonce, now, slot);
        match self.pit.insert(key, entry, now + self.lifetime) {
            Ok(_) => {
                self.stats.forwarded_units += 1;
                Verdict::Forward
            }
            Err(entry) => {
                self.spare_lists.recycle(entry);
                self.stats.busy += 1;
                Verdict::Refused(Refusal::TableFull)
            }
        }
    }

    /// Send the units at `offsets` upstream to each of the next hops the strategy chose (as
    /// few requests as the limits allow, [`Router::forward_upstream`]).
    fn on_outgoing_request(&mut self, now: Time, next_hops: &[SocketAddr], up: &Upstream, offsets: &[u64]) {
        if offsets.is_empty() {
            return;
        }
        for &next_hop in next_hops {
            self.forward_upstream(now, next_hop, up, offsets, false);
            self.strategy.after_send(now, next_hop);
        }
    }

    /// A Data from upstream: satisfy the pending entries it answers (see PROTOCOL.md). Its
    /// annotations are updated on the way (S3 §II-A: `T_D − T_I` for this router's own,
    /// one more hop for the others).
    pub(super) fn on_incoming_data(&mut self, now: Time, from: SocketAddr, d: &Data<'_>, datagram: &[u8]) {
        self.stats.data_in += 1;
        self.stats.bytes_in += d.payload.len() as u64;
        if self.strategy.wants_rtt() {
            self.rtt_sample(now, from, d);
        }
        let len = d.payload.len();
        let last = d.offset + len as u64 == d.total_size;
        let mut candidates = [0u16; UNIT_SIZES + 1];
        let mut n = 0;
        if let Ok(u) = u16::try_from(len) {
            candidates[0] = u;
            n = 1;
        }
        if last {
            for &u in &self.unit_sizes {
                if usize::from(u) > len {
                    candidates[n] = u;
                    n += 1;
                }
            }
        }
        let mut matched = false;
        for &unit in &candidates[..n] {
            let key = PitKey { eid: d.eid, offset: d.offset, unit };
            let Some(entry) = self.pit.remove_if(&key, |e| e.answered_by(d.tag, from)) else { continue };
            if !matched {
                // Verify before caching: the unit waits in staging for its blocks.
                self.stage(now, from, d.eid, d.offset, d.total_size, d.payload);
                matched = true;
            }
            let hops = d.hops.saturating_add(1);
            let (id, has_annotations) = (self.id, d.options.annotations().next().is_some());
            let sent = entry.forwarded_at(d.tag, from);
            for w in &entry.downstream {
                let early = entry.early(w, now, sent);
                self.enqueue(w.peer, datagram.len(), |b| {
                    b.copy_from_slice(datagram);
                    wire::rewrite_response(b, w.tag);
                    wire::set_hops(b, hops);
                    if early {
                        // It answers a request that had gone upstream well before its own.
                        wire::set_data_flags(b, DataFlags::COALESCED);
                    }
                    if has_annotations {
                        on_return(b, id, now.as_nanos());
                    }
                    Some(datagram.len())
                });
                self.stats.data_out += 1;
                self.stats.bytes_out += len as u64;
            }
            self.spare_lists.recycle(entry);
        }
        if !matched {
            self.on_data_unsolicited();
        }
    }

    /// The strategy's RTT sample: the first Data answering one of this router's upstream
    /// requests (matched by tag and next hop; a tag is one transmission, so the sample is
    /// unambiguous), unless an upstream router coalesced it (it answered an earlier request).
    fn rtt_sample(&mut self, now: Time, from: SocketAddr, d: &Data<'_>) {
        let Some(out) = self.upstream.get_mut(&d.tag).filter(|o| o.next_hop == from && !o.sampled) else { return };
        out.sampled = true;
        if !d.flags.contains(DataFlags::COALESCED) {
            let rtt = now.saturating_since(out.sent);
            self.strategy.after_receive_data(now, from, rtt);
        }
    }

    /// A Data that answers nothing pending (late, duplicate or forged): counted, dropped.
    fn on_data_unsolicited(&mut self) {
        self.stats.unsolicited += 1;
    }

    /// A Nack from upstream: pass it to everyone waiting for a unit it refuses.
    pub(super) fn on_incoming_nack(&mut self, now: Time, from: SocketAddr, n: &Nack<'_>, datagram: &[u8]) {
        self.stats.nacks_in += 1;
        if self.own_proofs.asked(n.tag, from).is_some() {
            if let Some((eid, block)) = self.own_proofs.refused(n.tag) {
                self.staging.proof_refused(eid, block);
            }
            return;
        }
        if self.control.get(&n.tag).is_some_and(|c| c.next_hop == from) {
            self.on_control_response(from, n.tag, None, datagram);
            return;
        }
        let Some(out) = self.upstream.get(&n.tag).filter(|o| o.next_hop == from) else {
            self.stats.unsolicited += 1;
            return;
        };
        // Range-specific refusals cover the range; the others the whole request.
        let ranged = matches!(n.code, NackCode::RangeBeyondEnd | NackCode::Internal);
        let refused = ByteRange::new(n.offset, n.length);
        let (eid, unit) = (out.up.eid, out.up.unit);
        let offsets: Vec<u64> =
            out.offsets.iter().copied().filter(|&o| !ranged || (o >= refused.offset && o < refused.end())).collect();
        if !ranged {
            self.upstream.remove(&n.tag);
        }
        // Units the upstream refused were wasted work: their sources pay for them again
        // (limits.rs), except for Busy, which is congestion, not the asker's doing.
        let recharge = n.code != NackCode::Busy;
        if recharge {
            // The hop cannot serve these (Busy is congestion): the strategy may avoid it.
            self.strategy.after_receive_nack(now, from);
        }
        let refusal = Refused { code: n.code, by: n.from, hops: n.hops.saturating_add(1), detail: n.detail, recharge };
        self.refuse_pending((n.tag, from), eid, unit, &offsets, false, &refusal);
    }

    /// Refuse the pending units at `offsets` (of `eid` and `unit`) that went out in the
    /// upstream request `sent` (its tag and next hop; with `latest`, only units whose latest
    /// request that was) to everyone waiting for them, one Nack per run of consecutive units
    /// per downstream and tag; the entries are removed. Returns the units refused.
    pub(super) fn refuse_pending(
        &mut self,
        sent: (u32, SocketAddr),
        eid: Eid,
        unit: u16,
        offsets: &[u64],
        latest: bool,
        why: &Refused<'_>,
    ) -> u64 {
        let (tag, hop) = sent;
        let mut waiting: Vec<(SocketAddr, u32, u64)> = Vec::new();
        let mut units = 0;
        let waits = self.strategy.waits_for_other_upstreams();
        for &o in offsets {
            let key = PitKey { eid, offset: o, unit };
            // A unit that went to other next hops too waits for them (strategy.rs).
            if waits
                && self.pit.get_mut(&key).is_some_and(|e| e.answered_by(tag, hop) && e.drop_out_if_others(tag, hop))
            {
                continue;
            }
            if let Some(e) =
                self.pit.remove_if(&key, |e| e.answered_by(tag, hop) && (!latest || e.last_next_hop() == Some(hop)))
            {
                waiting.extend(e.downstream.iter().map(|w| (w.peer, w.tag, o)));
                units += 1;
                if why.recharge {
                    self.limiter.charge(e.source, limits::REFUSED_UNIT_CHARGE);
                }
            }
        }
        waiting.sort_unstable();
        let step = u64::from(unit);
        let mut i = 0;
        while i < waiting.len() {
            let (peer, tag, first) = waiting[i];
            let mut k = 1;
            while waiting.get(i + k).is_some_and(|&(p, t, o)| p == peer && t == tag && o == first + k as u64 * step) {
                k += 1;
            }
            let range = ByteRange::new(first, u32::try_from(k as u64 * step).unwrap_or(u32::MAX));
            self.send_nack(peer, why.code, tag, eid, range, why.by, why.hops, why.detail);
            i += k;
        }
        units
    }

    /// `hop` was asked for something and sent nothing back for the upstream timeout
    /// ([`liveness`]): everything pending toward it — units, resolves, lists, proof requests
    /// — is refused with `NoRoute`, from this router, naming the hop.
    pub(super) fn upstream_silent(&mut self, hop: SocketAddr) {
        self.stats.upstream_timeouts += 1;
        let detail = self.silent_detail(hop);
        let why = Refused { code: NackCode::NoRoute, by: self.id, hops: 0, detail: &detail, recharge: false };
        let mut tags = self.upstream.keys_where(|_, o| o.next_hop == hop);
        tags.sort_unstable();
        for tag in tags {
            let Some(o) = self.upstream.remove(&tag) else { continue };
            self.stats.no_route += self.refuse_pending((tag, hop), o.up.eid, o.up.unit, &o.offsets, true, &why);
        }
        let mut tags = self.control.keys_where(|_, c| c.next_hop == hop);
        tags.sort_unstable();
        for tag in tags {
            let Some(c) = self.control.remove(&tag) else { continue };
            self.stats.no_route += 1;
            let range = ByteRange::new(0, 0);
            self.send_nack(c.downstream, NackCode::NoRoute, c.tag, c.query.eid(), range, self.id, 0, &detail);
        }
    }

    /// What a Nack for units waiting on a silent `hop` says.
    pub(super) fn silent_detail(&self, hop: SocketAddr) -> String {
        format!("upstream {hop} did not answer within {}", super::liveness::human(self.liveness.timeout()))
    }
}

/// What happened to one requested unit.
pub(super) enum Verdict {
    /// Answered from the content store.
    Served,
    /// Joined a pending entry.
    Waiting,
    /// To be sent upstream.
    Forward,
    Refused(Refusal),
}

/// Why a unit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Its nonce came back from another peer.
    Loop,
    /// The pending table, or the entry's list of downstreams, is full.
    TableFull,
    /// Its source used up its share ([`limits`]).
    SourceShare,
    /// Its next hop is presumed dead and already probed ([`liveness`]).
    HopDead,
}

impl Refusal {
    pub(super) fn code(self) -> NackCode {
        match self {
            Refusal::Loop => NackCode::Duplicate,
            Refusal::TableFull | Refusal::SourceShare => NackCode::Busy,
            Refusal::HopDead => NackCode::NoRoute,
        }
    }
}

/// A request's standing with the per-source limits and the next hop's liveness, for each
/// of its units.
pub(super) struct Admit {
    /// Its source's slot.
    pub(super) slot: SlotIx,
    /// Sources asking now (its share of the pending table is 1 / active).
    pub(super) active: usize,
    /// Its next hop is presumed dead and already probed: new units are refused.
    pub(super) hop_dead: bool,
}

/// A refusal passed to the downstreams of pending units.
pub(super) struct Refused<'a> {
    pub(super) code: NackCode,
    pub(super) by: NodeId,
    pub(super) hops: u8,
    pub(super) detail: &'a str,
    /// Charge each refused unit to the source of its entry again ([`limits`]).
    pub(super) recharge: bool,
}
