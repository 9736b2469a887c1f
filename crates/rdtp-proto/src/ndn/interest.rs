//! The Interest packet ("NDN Packet Format Specification 0.3", "Interest Packet"):
//!
//! ```text
//! Interest = INTEREST-TYPE TLV-LENGTH
//!              Name
//!              [CanBePrefix] [MustBeFresh] [ForwardingHint] [Nonce]
//!              [InterestLifetime] [HopLimit]
//!              [ApplicationParameters [InterestSignatureInfo InterestSignatureValue]]
//! ```
//!
//! When ApplicationParameters is present, the Name carries exactly one
//! ParametersSha256DigestComponent: SHA-256 of every byte from the start of
//! ApplicationParameters to the end of the Interest. The decoder checks it; the encoder
//! writes it.

use super::name::{Component, Name};
use super::tlv::{self, Ordered, types};
use super::{Error, sha256};

/// InterestLifetime when the element is absent (spec 0.3: 4 seconds).
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

/// An Interest.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Interest {
    /// The name asked for (with its ParametersSha256DigestComponent if it has parameters).
    pub name: Name,
    /// CanBePrefix: Data whose name the Interest's is a proper prefix of may answer.
    pub can_be_prefix: bool,
    /// MustBeFresh: a cached Data past its FreshnessPeriod may not answer.
    pub must_be_fresh: bool,
    /// ForwardingHint: names to forward towards when the Interest's has no route.
    pub forwarding_hint: Vec<Name>,
    /// Nonce (4 bytes), for loop detection.
    pub nonce: Option<[u8; 4]>,
    /// InterestLifetime in milliseconds (absent: [`DEFAULT_LIFETIME_MS`]).
    pub lifetime_ms: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters' value.
    pub app_parameters: Option<Vec<u8>>,
    /// InterestSignatureInfo's and InterestSignatureValue's values (signed Interests:
    /// carried, not interpreted).
    pub signature: Option<(Vec<u8>, Vec<u8>)>,
}

const ORDER: &[u64] = &[
    types::NAME,
    types::CAN_BE_PREFIX,
    types::MUST_BE_FRESH,
    types::FORWARDING_HINT,
    types::NONCE,
    types::INTEREST_LIFETIME,
    types::HOP_LIMIT,
    types::APPLICATION_PARAMETERS,
    types::INTEREST_SIGNATURE_INFO,
    types::INTEREST_SIGNATURE_VALUE,
];

impl Interest {
    /// An Interest for `name` with nothing else set.
    pub fn new(name: Name) -> Self {
        Interest { name, ..Interest::default() }
    }

    /// The lifetime in milliseconds, the default when absent.
    pub fn lifetime(&self) -> u64 {
        self.lifetime_ms.unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// Decode an Interest (the whole datagram or LpPacket fragment).
    pub fn decode(wire: &[u8]) -> Result<Self, Error> {
        let top = tlv::read_single(wire, types::INTEREST, "Interest")?;
        let mut el = Ordered::new(top.value, ORDER);
        let name = Name::decode_leading(&mut el)?;
        if name.is_empty() {
            return Err(Error::Invalid("empty Interest name"));
        }
        let mut i = Interest::new(name);
        let mut params_start = None;
        let mut sig_info = None;
        while let Some(e) = el.next()? {
            match e.ty {
                types::CAN_BE_PREFIX | types::MUST_BE_FRESH if !e.value.is_empty() => {
                    return Err(Error::Invalid("CanBePrefix/MustBeFresh must be empty"));
                }
                types::CAN_BE_PREFIX => i.can_be_prefix = true,
                types::MUST_BE_FRESH => i.must_be_fresh = true,
                types::FORWARDING_HINT => {
                    let mut r = e.reader();
                    while let Some(n) = r.next_element() {
                        let n = n?;
                        if n.ty != types::NAME {
                            return Err(Error::Unexpected { expected: "Name in ForwardingHint", found: n.ty });
                        }
                        i.forwarding_hint.push(Name::decode_value(n.value)?);
                    }
                    if i.forwarding_hint.is_empty() {
                        return Err(Error::Invalid("empty ForwardingHint"));
                    }
                }
                types::NONCE => i.nonce = Some(e.value.try_into().map_err(|_| Error::Invalid("Nonce length"))?),
                types::INTEREST_LIFETIME => i.lifetime_ms = Some(e.nni()?),
                types::HOP_LIMIT => {
                    let [h] = e.value else { return Err(Error::Invalid("HopLimit length")) };
                    i.hop_limit = Some(*h);
                }
                types::APPLICATION_PARAMETERS => {
                    params_start = Some(e.offset);
                    i.app_parameters = Some(e.value.to_vec());
                }
                types::INTEREST_SIGNATURE_INFO if params_start.is_some() => sig_info = Some(e.value.to_vec()),
                types::INTEREST_SIGNATURE_VALUE if sig_info.is_some() => {
                    i.signature = sig_info.take().map(|s| (s, e.value.to_vec()));
                }
                _ => {} // signature elements out of place: non-critical, ignored
            }
        }
        if sig_info.is_some() {
            return Err(Error::Missing("InterestSignatureValue"));
        }
        let digests: Vec<&Component> =
            i.name.components().iter().filter(|c| c.ty() == types::PARAMETERS_SHA256_DIGEST).collect();
        match (params_start, digests.as_slice()) {
            (None, []) => {}
            (Some(at), [d]) if d.value() == sha256(&[&top.value[at..]]) => {}
            _ => return Err(Error::ParametersDigest),
        }
        Ok(i)
    }

    /// Encode: the elements in the specification's order. With ApplicationParameters, the
    /// name's ParametersSha256DigestComponent is written with the digest of what follows
    /// (replacing the one the name has, or added at the end if it has none).
    pub fn encode(&self) -> Vec<u8> {
        let tail = self.parameters_tail();
        let name = match self.app_parameters {
            Some(_) => self.name_with_digest(&tail),
            None => self.name.clone(),
        };
        let mut v = Vec::with_capacity(name.value_len() + tail.len() + 32);
        name.encode(&mut v);
        if self.can_be_prefix {
            tlv::write_tlv(&mut v, types::CAN_BE_PREFIX, &[]);
        }
        if self.must_be_fresh {
            tlv::write_tlv(&mut v, types::MUST_BE_FRESH, &[]);
        }
        if !self.forwarding_hint.is_empty() {
            tlv::write_nested(&mut v, types::FORWARDING_HINT, |w| {
                self.forwarding_hint.iter().for_each(|n| n.encode(w))
            });
        }
        if let Some(n) = self.nonce {
            tlv::write_tlv(&mut v, types::NONCE, &n);
        }
        if let Some(l) = self.lifetime_ms {
            tlv::write_nni_tlv(&mut v, types::INTEREST_LIFETIME, l);
        }
        if let Some(h) = self.hop_limit {
            tlv::write_tlv(&mut v, types::HOP_LIMIT, &[h]);
        }
        v.extend_from_slice(&tail);
        let mut out = Vec::with_capacity(v.len() + 4);
        tlv::write_tlv(&mut out, types::INTEREST, &v);
        out
    }

    /// ApplicationParameters and the signature elements after it, encoded (empty without
    /// parameters): what the ParametersSha256DigestComponent is the digest of.
    fn parameters_tail(&self) -> Vec<u8> {
        let mut tail = Vec::new();
        if let Some(p) = &self.app_parameters {
            tlv::write_tlv(&mut tail, types::APPLICATION_PARAMETERS, p);
            if let Some((info, value)) = &self.signature {
                tlv::write_tlv(&mut tail, types::INTEREST_SIGNATURE_INFO, info);
                tlv::write_tlv(&mut tail, types::INTEREST_SIGNATURE_VALUE, value);
            }
        }
        tail
    }

    /// The name with one ParametersSha256DigestComponent, the digest of `tail`: where the
    /// name's first one was (any others dropped), or at the end if it had none.
    fn name_with_digest(&self, tail: &[u8]) -> Name {
        let is_digest = |c: &&Component| c.ty() == types::PARAMETERS_SHA256_DIGEST;
        let at = self.name.components().iter().position(|c| is_digest(&c)).unwrap_or(self.name.len());
        let mut cs: Vec<Component> = self.name.components().iter().filter(|c| !is_digest(c)).cloned().collect();
        cs.insert(at, Component::parameters_digest(sha256(&[tail])));
        Name::from(cs)
    }

    /// Set the name's ParametersSha256DigestComponent to what [`Interest::encode`] will write
    /// (so that the Interest equals its own decoded encoding).
    pub fn update_parameters_digest(&mut self) {
        if self.app_parameters.is_some() {
            self.name = self.name_with_digest(&self.parameters_tail());
        }
    }

    /// True if `data_name` answers this Interest's name (exact match, or a proper extension
    /// if CanBePrefix; the implicit digest component is not considered).
    pub fn matches_name(&self, data_name: &Name) -> bool {
        if self.can_be_prefix { self.name.is_prefix_of(data_name) } else { &self.name == data_name }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ndn::unhex;

    // Vectors from ndn-cxx tests/unit/interest.t.cpp (named-data/ndn-cxx).

    #[test]
    fn ndn_cxx_basic() {
        let wire = unhex("051c 0714 08056c6f63616c 08036e646e 0806707265666978 0a0401020304");
        let i = Interest::decode(&wire).unwrap();
        assert_eq!(i.name.to_string(), "/local/ndn/prefix");
        assert_eq!((i.nonce, i.can_be_prefix, i.lifetime(), i.hop_limit), (Some([1, 2, 3, 4]), false, 4000, None));
        assert_eq!(i.encode(), wire);
    }

    #[test]
    fn ndn_cxx_full() {
        let wire = unhex(
            "0556 0736 08056c6f63616c 08036e646e 0806707265666978
             0220ff9100e04eaadcf30674d98026a051ba25f56b69bfa026dcccd72c6ea0f7315a
             2100 1200 1e05 0703080148 0a044c1ecb4a 0c0276a1 2201dc 2404c0c1c2c3",
        );
        let i = Interest::decode(&wire).unwrap();
        assert!(i.can_be_prefix && i.must_be_fresh);
        assert_eq!(i.forwarding_hint, ["/H".parse::<Name>().unwrap()]);
        assert_eq!((i.nonce, i.lifetime_ms, i.hop_limit), (Some([0x4c, 0x1e, 0xcb, 0x4a]), Some(30369), Some(220)));
        assert_eq!(i.app_parameters.as_deref(), Some(&[0xc0, 0xc1, 0xc2, 0xc3][..]));
        assert_eq!(i.encode(), wire);
        // Built without the digest component, the encoder adds it.
        let mut built = i.clone();
        built.name = "/local/ndn/prefix".parse().unwrap();
        assert_eq!(built.encode(), wire);
    }

    #[test]
    fn ndn_cxx_decode_cases() {
        // NonCriticalElementOutOfOrder / unrecognised non-critical (FC00) are ignored.
        let i =
            Interest::decode(&unhex("051c 0703080149 fc00 2100 1200 0a044acb1e4c 0c0276a1 2201d6 2200 fc00")).unwrap();
        assert_eq!((i.hop_limit, i.lifetime_ms), (Some(0xd6), Some(30369)));
        for (bad, why) in [
            ("0507 fc00 0703080149", "Name first"),
            ("0500", "no Name"),
            ("0502 0700", "empty Name"),
            ("0508 0703080149 210102", "CanBePrefix with a value"),
            ("0507 0703080149 0a00", "Nonce of 0 bytes"),
            ("050c 0703080149 0a05efa420b262", "Nonce of 5 bytes"),
            ("0507 0703080149 2200", "HopLimit of 0 bytes"),
            ("0507 0703080149 fb00", "unrecognised critical type 251"),
            ("0510 0703080149 09030d0101 0a0401000000", "v0.2 Selectors (type 9)"),
            ("0509 0703080149 2402cafe", "parameters without digest"),
            (
                "0527 0725 080149 0220e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                "digest without parameters",
            ),
            (
                "052b 0725 080149 02200000000000000000000000000000000000000000000000000000000000000000 2402cafe",
                "digest mismatch",
            ),
            ("050f 0703080149 0c0276a1 0a044acb1e4c", "Nonce after InterestLifetime"),
            ("4202cafe", "not an Interest"),
            ("051c 0714 08056c6f63616c", "truncated"),
            ("0505 0703080149 00", "trailing byte"),
        ] {
            assert!(Interest::decode(&unhex(bad)).is_err(), "{why}: {bad}");
        }
    }

    #[test]
    fn digest_component_is_placed_and_checked() {
        let mut i = Interest::new("/a/b".parse().unwrap());
        i.app_parameters = Some(b"hi".to_vec());
        i.signature = Some((vec![0x1b, 1, 0], vec![9; 4]));
        i.update_parameters_digest();
        assert_eq!(i.name.len(), 3);
        let wire = i.encode();
        assert_eq!(Interest::decode(&wire).unwrap(), i);
        let mut tampered = wire.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert_eq!(Interest::decode(&tampered), Err(Error::ParametersDigest));
        // Two digest components (stale ones): one is written, where the first was.
        let stale = Component::parameters_digest([0; 32]);
        let mut two = i.clone();
        two.name = Name::from(vec![Component::generic(*b"a"), stale.clone(), Component::generic(*b"b"), stale]);
        let back = Interest::decode(&two.encode()).unwrap();
        assert_eq!(back.name.len(), 3);
        assert_eq!(back.name.components()[1].ty(), types::PARAMETERS_SHA256_DIGEST);
        two.update_parameters_digest();
        assert_eq!(two, back);
    }
}
