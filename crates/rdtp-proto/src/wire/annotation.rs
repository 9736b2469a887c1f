//! Anticipated interests and router annotations (seed 003 §II-A, "S3" below).
//!
//! A receiver may list, in a Request, the units it intends to ask for next (**anticipated
//! interests**, option `ANTICIPATED`). A caching router that holds some of them appends a
//! **router annotation** (option `ROUTER_ANNOTATION`): its node id, the time `T_I` it
//! processed the request on its own clock, and which anticipated units it holds (a bitmap
//! over the list). It never alters earlier routers' annotations. The node that answers —
//! a router from its store, or the origin — copies the list and the annotations into the
//! Data it sends, with the request's nonce (`REQUEST_NONCE`, so a receiver can tell its own
//! request's annotations from those of a request it was coalesced with). On the way back
//! each router that annotated replaces `T_I` by `T_D − T_I` (marking the annotation
//! *returned*), and every router increments the hop count of every returned annotation
//! ([`on_return`]), so the receiver learns each cache's position on the path and, by eq. 1,
//! its RTT without any clock synchronisation: `RTT(k) = (T_D − T_I) − (T_D(k) − T_I(k))`.
//!
//! Routers keep no state for any of this: everything travels in the packets, and the
//! rewrite on the way back is in place (fixed-size fields). Every count and size is bounded
//! here ([`MAX_ANTICIPATED_UNITS`], [`MAX_ANTICIPATED_RANGES`], [`MAX_ANNOTATIONS`]) and
//! checked by [`super::Options::parse`], so no datagram makes a node loop or allocate more.
//!
//! Byte layouts and test vectors: `docs/PROTOCOL.md`, "Anticipated interests".

use super::data::DATA_HEADER_LEN;
use super::header::{PREFIX_LEN, PacketType};
use super::tlv::{ByteRange, Options, RANGE_LEN, TLV_HEADER_LEN, types};
use crate::node::{NODE_ID_LEN, NodeId};

/// Most ranges in one `ANTICIPATED` list.
pub const MAX_ANTICIPATED_RANGES: usize = 8;
/// Most units one `ANTICIPATED` list may name (the width of an annotation's bitmap).
pub const MAX_ANTICIPATED_UNITS: u64 = 64;
/// Most `ROUTER_ANNOTATION` items in one datagram; a router that finds this many adds none.
pub const MAX_ANNOTATIONS: usize = 8;
/// Bytes of one annotation's value.
pub const ANNOTATION_LEN: usize = NODE_ID_LEN + 8 + 8 + 1 + 1;
/// Bytes of a `REQUEST_NONCE` value, and of the whole item.
pub const NONCE_LEN: usize = 8;
pub const NONCE_ITEM_LEN: usize = TLV_HEADER_LEN + NONCE_LEN;
/// Most bytes the items of this module add to a datagram: a full list, the nonce and
/// [`MAX_ANNOTATIONS`] annotations (a receiver anticipating must leave this much room below
/// its path MTU in its unit: [`ANNOTATION_ROOM`]).
pub const MAX_AREA: usize = TLV_HEADER_LEN
    + MAX_ANTICIPATED_RANGES * RANGE_LEN
    + TLV_HEADER_LEN
    + NONCE_LEN
    + MAX_ANNOTATIONS * (TLV_HEADER_LEN + ANNOTATION_LEN);
/// What a receiver listing anticipated interests takes off its unit so that a Data with a
/// full annotation area still fits the MTU the unit was sized for.
pub const ANNOTATION_ROOM: u16 = MAX_AREA as u16;

/// One router's annotation (S3 §II-A): who, when, which anticipated units it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Annotation {
    /// The router's node id (need not be routable, S3 §II-A).
    pub node: NodeId,
    /// On the way to the source: `T_I`, the router's clock (ns) when it processed the
    /// request. Once [`Annotation::RETURNED`]: `T_D − T_I` (ns), the time the request and its
    /// answer spent beyond this router.
    pub time: u64,
    /// Bit `i` (least significant first) set: the router holds the `i`-th unit of the
    /// `ANTICIPATED` list, counting its ranges' units in order.
    pub held: u64,
    /// Routers the Data crossed after this one, on its way back (0 at the router itself).
    pub hops: u8,
    /// Flag bits; undefined ones are carried unchanged.
    pub flags: u8,
}

impl Annotation {
    /// `time` holds `T_D − T_I` and `hops` counts routers towards the receiver.
    pub const RETURNED: u8 = 0x01;

    pub fn is_returned(&self) -> bool {
        self.flags & Self::RETURNED != 0
    }

    /// Decode a `ROUTER_ANNOTATION` value (exactly [`ANNOTATION_LEN`] bytes).
    pub fn decode(v: &[u8]) -> Option<Annotation> {
        if v.len() != ANNOTATION_LEN {
            return None;
        }
        let u64_at = |i: usize| u64::from_be_bytes(v[i..i + 8].try_into().expect("8 bytes"));
        let mut node = [0u8; NODE_ID_LEN];
        node.copy_from_slice(&v[..NODE_ID_LEN]);
        Some(Annotation { node: NodeId(node), time: u64_at(8), held: u64_at(16), hops: v[24], flags: v[25] })
    }

    fn encode_value(&self, v: &mut [u8]) {
        v[..NODE_ID_LEN].copy_from_slice(&self.node.0);
        v[8..16].copy_from_slice(&self.time.to_be_bytes());
        v[16..24].copy_from_slice(&self.held.to_be_bytes());
        v[24] = self.hops;
        v[25] = self.flags;
    }

    /// Write the whole option item into `out` (≥ 29 bytes); returns bytes written.
    pub fn write(&self, out: &mut [u8]) -> usize {
        out[0] = types::ROUTER_ANNOTATION;
        out[1..3].copy_from_slice(&(ANNOTATION_LEN as u16).to_be_bytes());
        self.encode_value(&mut out[TLV_HEADER_LEN..TLV_HEADER_LEN + ANNOTATION_LEN]);
        TLV_HEADER_LEN + ANNOTATION_LEN
    }
}

/// Bytes of an item of type `ty` holding an annotation.
pub const ANNOTATION_ITEM_LEN: usize = TLV_HEADER_LEN + ANNOTATION_LEN;

/// Check one of this module's items as [`Options::parse`] meets it; `seen` counts
/// `(ANTICIPATED, REQUEST_NONCE, ROUTER_ANNOTATION)` so far.
pub(crate) fn check_item(ty: u8, value: &[u8], seen: &mut [usize; 3]) -> Result<(), &'static str> {
    match ty {
        types::ANTICIPATED => {
            seen[0] += 1;
            if seen[0] > 1 {
                return Err("duplicate ANTICIPATED option");
            }
            if value.is_empty()
                || !value.len().is_multiple_of(RANGE_LEN)
                || value.len() / RANGE_LEN > MAX_ANTICIPATED_RANGES
            {
                return Err("ANTICIPATED length");
            }
        }
        types::REQUEST_NONCE => {
            seen[1] += 1;
            if seen[1] > 1 {
                return Err("duplicate REQUEST_NONCE option");
            }
            if value.len() != NONCE_LEN {
                return Err("REQUEST_NONCE length");
            }
        }
        types::ROUTER_ANNOTATION => {
            seen[2] += 1;
            if seen[2] > MAX_ANNOTATIONS {
                return Err("more than 8 ROUTER_ANNOTATION options");
            }
            if value.len() != ANNOTATION_LEN {
                return Err("ROUTER_ANNOTATION length");
            }
        }
        _ => {}
    }
    Ok(())
}

impl<'a> Options<'a> {
    /// The ranges of the `ANTICIPATED` list, in order (none without one).
    pub fn anticipated(&self) -> impl Iterator<Item = ByteRange> + 'a {
        super::tlv::ranges_of(self.get(types::ANTICIPATED).unwrap_or(&[]))
    }

    /// Offsets of the anticipated units of `unit` bytes, in bitmap order (at most
    /// [`MAX_ANTICIPATED_UNITS`], whatever the list says).
    pub fn anticipated_offsets(&self, unit: u64) -> impl Iterator<Item = u64> + 'a {
        let unit = unit.max(1);
        self.anticipated()
            .flat_map(move |r| (0..u64::from(r.length).div_ceil(unit)).map(move |i| r.offset.saturating_add(i * unit)))
            .take(MAX_ANTICIPATED_UNITS as usize)
    }

    /// The nonce of the request whose list and annotations a Data carries.
    pub fn request_nonce(&self) -> Option<u64> {
        self.get(types::REQUEST_NONCE).and_then(|v| v.try_into().ok()).map(u64::from_be_bytes)
    }

    /// Every router annotation, in the order routers added them.
    pub fn annotations(&self) -> impl Iterator<Item = Annotation> + 'a {
        self.iter().filter(|(t, _)| *t == types::ROUTER_ANNOTATION).filter_map(|(_, v)| Annotation::decode(v))
    }

    /// The `ANTICIPATED` item and every `ROUTER_ANNOTATION` item, as raw bytes in order:
    /// what a router forwarding a request carries on, and what an answering node copies.
    pub fn copy_annotation_items(&self, out: &mut Vec<u8>) {
        let mut rest = self.raw();
        while rest.len() >= TLV_HEADER_LEN {
            let len = TLV_HEADER_LEN + usize::from(u16::from_be_bytes([rest[1], rest[2]]));
            let Some(item) = rest.get(..len) else { return };
            if rest[0] == types::ANTICIPATED || rest[0] == types::ROUTER_ANNOTATION {
                out.extend_from_slice(item);
            }
            rest = &rest[len..];
        }
    }
}

/// Bytes of an `ANTICIPATED` item with `n` ranges (0 for none).
pub const fn anticipated_len(n: usize) -> usize {
    if n == 0 { 0 } else { TLV_HEADER_LEN + n * RANGE_LEN }
}

/// Write an `ANTICIPATED` item for `ranges` (1–8, as [`anticipated_len`] sizes) into `out`.
pub fn write_anticipated(out: &mut [u8], ranges: &[ByteRange]) -> usize {
    let n = super::tlv::write_ranges_item(out, types::ANTICIPATED, ranges);
    debug_assert!(ranges.len() <= MAX_ANTICIPATED_RANGES);
    n
}

/// Write a `REQUEST_NONCE` item ([`NONCE_ITEM_LEN`] bytes) into `out`.
pub fn write_request_nonce(out: &mut [u8], nonce: u64) -> usize {
    out[0] = types::REQUEST_NONCE;
    out[1..3].copy_from_slice(&(NONCE_LEN as u16).to_be_bytes());
    out[TLV_HEADER_LEN..NONCE_ITEM_LEN].copy_from_slice(&nonce.to_be_bytes());
    NONCE_ITEM_LEN
}

/// The bitmap of the anticipated units (at `offsets`, in list order) that `holds`.
pub fn held_bitmap(offsets: impl Iterator<Item = u64>, mut holds: impl FnMut(u64) -> bool) -> u64 {
    offsets.take(MAX_ANTICIPATED_UNITS as usize).enumerate().fold(0, |m, (i, o)| if holds(o) { m | 1 << i } else { m })
}

/// A router forwards a Data datagram (already accepted by [`super::Packet::decode`]) towards
/// its receiver at `now_ns` on its own clock: its own annotation that is not yet returned
/// gets `T_D − T_I` and hop count 0 and is marked returned; every other returned annotation
/// counts one more hop (S3 §II-A). In place: the datagram keeps its length. Returns whether
/// anything changed. Never panics; anything that is not a Data's option area is left alone.
pub fn on_return(datagram: &mut [u8], me: NodeId, now_ns: u64) -> bool {
    if datagram.len() < DATA_HEADER_LEN || datagram.get(PREFIX_LEN - 1) != Some(&(PacketType::Data as u8)) {
        return false;
    }
    let opt_len = usize::from(u16::from_be_bytes([datagram[DATA_HEADER_LEN - 2], datagram[DATA_HEADER_LEN - 1]]));
    let Some(area) = datagram.get_mut(DATA_HEADER_LEN..DATA_HEADER_LEN + opt_len) else { return false };
    let mut changed = false;
    let mut at = 0;
    while at + TLV_HEADER_LEN <= area.len() {
        let len = usize::from(u16::from_be_bytes([area[at + 1], area[at + 2]]));
        let value_at = at + TLV_HEADER_LEN;
        if value_at + len > area.len() {
            break;
        }
        if area[at] == types::ROUTER_ANNOTATION
            && let Some(mut a) = Annotation::decode(&area[value_at..value_at + len])
        {
            if a.node == me && !a.is_returned() {
                a.time = now_ns.saturating_sub(a.time);
                a.hops = 0;
                a.flags |= Annotation::RETURNED;
            } else if a.is_returned() {
                a.hops = a.hops.saturating_add(1);
            }
            a.encode_value(&mut area[value_at..value_at + len]);
            changed = true;
        }
        at = value_at + len;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eid::Eid;
    use crate::wire::{Data, DataFlags, Packet};

    fn ann(node: &str, time: u64, held: u64) -> Annotation {
        Annotation { node: NodeId::label(node).unwrap(), time, held, hops: 0, flags: 0 }
    }

    #[test]
    fn items_round_trip_and_are_bounded() {
        let mut buf = vec![0u8; MAX_AREA];
        let ranges = [ByteRange::new(1000, 3000), ByteRange::new(9000, 1000)];
        let mut n = write_anticipated(&mut buf, &ranges);
        assert_eq!(n, anticipated_len(2));
        n += write_request_nonce(&mut buf[n..], 0xdead_beef_0000_0001);
        for i in 0..MAX_ANNOTATIONS as u64 {
            n += ann("r", i, 1 << i).write(&mut buf[n..]);
        }
        assert_eq!(n, MAX_AREA - (MAX_ANTICIPATED_RANGES - 2) * RANGE_LEN);
        let o = Options::parse(&buf[..n]).unwrap();
        assert_eq!(o.anticipated().collect::<Vec<_>>(), ranges);
        assert_eq!(o.anticipated_offsets(1000).collect::<Vec<_>>(), [1000, 2000, 3000, 9000]);
        assert_eq!(o.request_nonce(), Some(0xdead_beef_0000_0001));
        let a: Vec<_> = o.annotations().collect();
        assert_eq!(a.len(), MAX_ANNOTATIONS);
        assert_eq!(a[3], ann("r", 3, 8));
        // One annotation too many, a duplicate list, wrong sizes: refused.
        let mut more = buf[..n].to_vec();
        let mut extra = [0u8; ANNOTATION_ITEM_LEN];
        ann("x", 0, 0).write(&mut extra);
        more.extend_from_slice(&extra);
        assert!(Options::parse(&more).is_err());
        let twice = [&buf[..anticipated_len(2)], &buf[..anticipated_len(2)]].concat();
        assert!(Options::parse(&twice).is_err());
        assert!(Options::parse(&[types::ROUTER_ANNOTATION, 0, 1, 7]).is_err());
        assert!(Options::parse(&[types::REQUEST_NONCE, 0, 4, 1, 2, 3, 4]).is_err());
        let nine = vec![0u8; 9 * RANGE_LEN];
        let mut item = vec![types::ANTICIPATED, 0, (9 * RANGE_LEN) as u8];
        item.extend_from_slice(&nine);
        assert!(Options::parse(&item).is_err(), "nine ranges");
        // Copying keeps the list and the annotations, not the nonce.
        let mut copy = Vec::new();
        o.copy_annotation_items(&mut copy);
        assert_eq!(copy.len(), n - (TLV_HEADER_LEN + NONCE_LEN));
        let c = Options::parse(&copy).unwrap();
        assert_eq!((c.request_nonce(), c.annotations().count()), (None, MAX_ANNOTATIONS));
    }

    #[test]
    fn the_list_names_at_most_64_units() {
        let mut buf = [0u8; 64];
        let n = write_anticipated(&mut buf, &[ByteRange::new(0, 100 * 1000)]);
        let o = Options::parse(&buf[..n]).unwrap();
        assert_eq!(o.anticipated_offsets(1000).count(), 64);
        let held = held_bitmap(o.anticipated_offsets(1000), |off| off % 2000 == 0);
        assert_eq!(held, 0x5555_5555_5555_5555);
    }

    /// A Data through three routers: r1 (next to the receiver) and r2 annotated the request,
    /// r3 served it and added its own (already returned). Clocks are skewed arbitrarily.
    #[test]
    fn the_way_back_converts_own_annotations_and_counts_hops() {
        let mut opts = vec![0u8; MAX_AREA];
        let mut n = write_anticipated(&mut opts, &[ByteRange::new(0, 4000)]);
        n += write_request_nonce(&mut opts[n..], 7);
        n += ann("r1", 1_000_000_000, 0b0001).write(&mut opts[n..]); // r1's clock: 1 s
        n += ann("r2", 50, 0b0010).write(&mut opts[n..]); // r2's clock: 50 ns
        n += Annotation { flags: Annotation::RETURNED, ..ann("r3", 0, 0b0100) }.write(&mut opts[n..]);
        let d = Data {
            flags: DataFlags(DataFlags::CACHED),
            hops: 0,
            tag: 1,
            eid: Eid([1; 32]),
            offset: 0,
            total_size: 10,
            served_by: NodeId::label("r3").unwrap(),
            options: Options::parse(&opts[..n]).unwrap(),
            payload: b"0123456789",
        };
        let mut dg = vec![0u8; d.encoded_len()];
        d.encode(&mut dg).unwrap();
        // r2 forwards it 30 µs after it forwarded the request, r1 100 µs after its own.
        assert!(on_return(&mut dg, NodeId::label("r2").unwrap(), 30_050));
        assert!(on_return(&mut dg, NodeId::label("r1").unwrap(), 1_000_100_000));
        let Ok(Packet::Data(back)) = Packet::decode(&dg) else { panic!() };
        let a: Vec<_> = back.options.annotations().collect();
        assert_eq!((a[0].time, a[0].hops, a[0].is_returned()), (100_000, 0, true));
        assert_eq!((a[1].time, a[1].hops, a[1].is_returned()), (30_000, 1, true));
        assert_eq!((a[2].time, a[2].hops), (0, 2));
        assert_eq!(back.payload, b"0123456789");
        // A router that is not on the list changes only hop counts; garbage is left alone.
        assert!(!on_return(&mut [0u8; 10], NodeId::ORIGIN, 0));
        let mut short = dg[..DATA_HEADER_LEN + 3].to_vec();
        on_return(&mut short, NodeId::ORIGIN, 0);
    }
}
