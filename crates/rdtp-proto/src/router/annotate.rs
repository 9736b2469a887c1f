//! What a router adds to anticipated interests (seed 003 §II-A, "S3"), per request, from the
//! request alone: no state survives the call.
//!
//! * A request it **forwards** carries on the downstream's `ANTICIPATED` list and every
//!   annotation, plus this router's own — node id, `T_I` = now on its clock, the bitmap of
//!   anticipated units its store holds — if it holds at least one (S3: "if the router has at
//!   least one of the future chunks but not the chunk to which the current request refers,
//!   it forwards the Interest packet … appending").
//! * The first Data it **serves from its store** for a request carries the list and the
//!   annotations back, with the request's nonce (S3: "it returns the corresponding Data
//!   packet, appending the anticipated chunks header retrieved from the Interest packet").
//!   The paper leaves open whether the serving cache reports the anticipated units it holds
//!   itself; it does here, as an annotation already returned (`T_D − T_I` = 0, hop count 0):
//!   without it a receiver fetching a run of units from one cache would learn nothing about
//!   where the next units are.
//!
//! The way back (`T_I` → `T_D − T_I`, hop counts) is [`crate::wire::annotation::on_return`].
//! Nothing is added beyond [`MAX_ANNOTATIONS`]: a request that already carries that many
//! goes on unchanged.

use crate::node::NodeId;
use crate::time::Time;
use crate::wire::Request;
use crate::wire::annotation::{
    ANNOTATION_ITEM_LEN, Annotation, MAX_ANNOTATIONS, NONCE_ITEM_LEN, held_bitmap, write_request_nonce,
};

/// One request's anticipated interests as this router sees them.
#[derive(Debug)]
pub(crate) struct Anticipation {
    /// The downstream's `ANTICIPATED` item and annotations, raw.
    carried: Vec<u8>,
    annotations: usize,
    /// Which anticipated units this router's store holds.
    held: u64,
    nonce: u64,
    me: NodeId,
    now: Time,
}

impl Anticipation {
    /// The anticipation of `req`, if it lists any units; `holds(offset)` says whether the
    /// store has the unit at `offset` (of `req`'s unit size).
    pub(crate) fn of(req: &Request<'_>, me: NodeId, now: Time, holds: impl FnMut(u64) -> bool) -> Option<Self> {
        req.options.anticipated().next()?;
        let mut carried = Vec::with_capacity(crate::wire::annotation::MAX_AREA);
        req.options.copy_annotation_items(&mut carried);
        let held = held_bitmap(req.options.anticipated_offsets(u64::from(req.unit)), holds);
        let annotations = req.options.annotations().count();
        Some(Anticipation { carried, annotations, held, nonce: req.nonce, me, now })
    }

    /// This router's annotation, if it holds an anticipated unit and there is room.
    fn own(&self, returned: bool) -> Option<Annotation> {
        (self.held != 0 && self.annotations < MAX_ANNOTATIONS).then_some(Annotation {
            node: self.me,
            time: if returned { 0 } else { self.now.as_nanos() },
            held: self.held,
            hops: 0,
            flags: if returned { Annotation::RETURNED } else { 0 },
        })
    }

    /// The option items a forwarded request carries.
    pub(crate) fn upstream(&self) -> Box<[u8]> {
        let mut v = self.carried.clone();
        if let Some(a) = self.own(false) {
            let at = v.len();
            v.resize(at + ANNOTATION_ITEM_LEN, 0);
            a.write(&mut v[at..]);
        }
        v.into_boxed_slice()
    }

    /// The option items of the first Data this router serves for the request.
    pub(crate) fn echo(&self) -> Vec<u8> {
        let mut v = self.carried.clone();
        if let Some(a) = self.own(true) {
            let at = v.len();
            v.resize(at + ANNOTATION_ITEM_LEN, 0);
            a.write(&mut v[at..]);
        }
        let at = v.len();
        v.resize(at + NONCE_ITEM_LEN, 0);
        write_request_nonce(&mut v[at..], self.nonce);
        v
    }
}
