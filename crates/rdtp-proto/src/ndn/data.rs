//! The Data packet ("NDN Packet Format Specification 0.3", "Data Packet", "Data Signature"):
//!
//! ```text
//! Data = DATA-TYPE TLV-LENGTH
//!          Name [MetaInfo] [Content] DataSignature
//! MetaInfo = META-INFO-TYPE TLV-LENGTH [ContentType] [FreshnessPeriod] [FinalBlockId]
//! DataSignature = SignatureInfo SignatureValue
//! ```
//!
//! The signed portion is every byte from the start of Name to the end of SignatureInfo,
//! exactly as received (elements the decoder skipped included). DigestSha256 (signature
//! type 0) is checked here; the other types are decoded and reported unverified. The
//! implicit digest of a Data is SHA-256 of its whole TLV.

use super::name::{Component, Name};
use super::tlv::{self, Ordered, types};
use super::{Error, sha256};

/// SignatureType values (spec 0.3, "SignatureType").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignatureType {
    /// 0: SHA-256 of the signed portion; integrity only.
    DigestSha256,
    /// 1: RSA PKCS#1 v1.5 over SHA-256.
    Sha256WithRsa,
    /// 3: ECDSA over SHA-256.
    Sha256WithEcdsa,
    /// 4: HMAC-SHA-256.
    HmacWithSha256,
    /// 5: Ed25519.
    Ed25519,
    /// 200: no signature (the "NullSignature" of the NDN TLV wiki; NDNts's default for
    /// Data it was given no signer for). Integrity rests on the Interest's implicit digest,
    /// if any.
    Null,
    /// Any other value.
    Other(u64),
}

impl SignatureType {
    /// The SignatureType number.
    pub fn code(self) -> u64 {
        match self {
            SignatureType::DigestSha256 => 0,
            SignatureType::Sha256WithRsa => 1,
            SignatureType::Sha256WithEcdsa => 3,
            SignatureType::HmacWithSha256 => 4,
            SignatureType::Ed25519 => 5,
            SignatureType::Null => 200,
            SignatureType::Other(n) => n,
        }
    }

    /// The type of a SignatureType number.
    pub fn from_code(n: u64) -> Self {
        match n {
            0 => SignatureType::DigestSha256,
            1 => SignatureType::Sha256WithRsa,
            3 => SignatureType::Sha256WithEcdsa,
            4 => SignatureType::HmacWithSha256,
            5 => SignatureType::Ed25519,
            200 => SignatureType::Null,
            n => SignatureType::Other(n),
        }
    }
}

/// KeyLocator: the name of the signing key (or certificate), or a digest of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyLocator {
    /// A Name.
    Name(Name),
    /// KeyDigest's value.
    KeyDigest(Vec<u8>),
}

/// SignatureInfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureInfo {
    /// SignatureType.
    pub sig_type: SignatureType,
    /// KeyLocator, if present.
    pub key_locator: Option<KeyLocator>,
    /// The other elements recognised after KeyLocator (ValidityPeriod of certificates,
    /// SignatureNonce, SignatureTime, SignatureSeqNum), whole TLVs as received, kept so
    /// the Data re-encodes to the same signed portion.
    pub extensions: Vec<u8>,
}

impl SignatureInfo {
    /// DigestSha256 with no KeyLocator.
    pub fn digest_sha256() -> Self {
        SignatureInfo { sig_type: SignatureType::DigestSha256, key_locator: None, extensions: Vec::new() }
    }

    fn decode_value(value: &[u8]) -> Result<Self, Error> {
        const ORDER: &[u64] = &[types::SIGNATURE_TYPE, types::KEY_LOCATOR];
        let mut r = tlv::Reader::new(value);
        let first = r.read()?;
        if first.ty != types::SIGNATURE_TYPE {
            return Err(Error::Missing("SignatureType"));
        }
        let mut info = SignatureInfo::digest_sha256();
        info.sig_type = SignatureType::from_code(first.nni()?);
        let rest = &value[first.wire.len()..];
        let mut el = tlv::Reader::new(rest);
        if el.peek_type() == Some(types::KEY_LOCATOR) {
            let k = el.read()?;
            let mut kr = k.reader();
            let inner = kr.read()?;
            if !kr.is_empty() {
                return Err(Error::Invalid("KeyLocator holds one element"));
            }
            info.key_locator = Some(match inner.ty {
                types::NAME => KeyLocator::Name(Name::decode_value(inner.value)?),
                types::KEY_DIGEST => KeyLocator::KeyDigest(inner.value.to_vec()),
                t => return Err(Error::Unexpected { expected: "Name or KeyDigest in KeyLocator", found: t }),
            });
        }
        let ext_start = rest.len() - el.remaining();
        while let Some(e) = el.next_element() {
            let e = e?;
            let known = matches!(
                e.ty,
                types::VALIDITY_PERIOD | types::SIGNATURE_NONCE | types::SIGNATURE_TIME | types::SIGNATURE_SEQ_NUM
            );
            if (!known && tlv::is_critical(e.ty)) || ORDER.contains(&e.ty) {
                return Err(Error::Critical(e.ty));
            }
        }
        info.extensions = rest[ext_start..].to_vec();
        Ok(info)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_nested(out, types::SIGNATURE_INFO, |v| {
            tlv::write_nni_tlv(v, types::SIGNATURE_TYPE, self.sig_type.code());
            if let Some(k) = &self.key_locator {
                tlv::write_nested(v, types::KEY_LOCATOR, |kv| match k {
                    KeyLocator::Name(n) => n.encode(kv),
                    KeyLocator::KeyDigest(d) => tlv::write_tlv(kv, types::KEY_DIGEST, d),
                });
            }
            v.extend_from_slice(&self.extensions);
        });
    }
}

/// MetaInfo's elements (all optional).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetaInfo {
    /// ContentType (absent: 0, BLOB).
    pub content_type: Option<u64>,
    /// FreshnessPeriod in milliseconds (absent: 0).
    pub freshness_ms: Option<u64>,
    /// FinalBlockId: the last component of the last segment's name.
    pub final_block: Option<Component>,
}

/// ContentType values (spec 0.3, "ContentType").
pub mod content_type {
    /// Payload.
    pub const BLOB: u64 = 0;
    /// A list of delegations.
    pub const LINK: u64 = 1;
    /// A public key or certificate.
    pub const KEY: u64 = 2;
    /// An application-level Nack.
    pub const NACK: u64 = 3;
}

impl MetaInfo {
    fn is_empty(&self) -> bool {
        self.content_type.is_none() && self.freshness_ms.is_none() && self.final_block.is_none()
    }

    fn decode_value(value: &[u8]) -> Result<Self, Error> {
        const ORDER: &[u64] = &[types::CONTENT_TYPE, types::FRESHNESS_PERIOD, types::FINAL_BLOCK_ID];
        let mut m = MetaInfo::default();
        let mut el = Ordered::new(value, ORDER);
        while let Some(e) = el.next()? {
            match e.ty {
                types::CONTENT_TYPE => m.content_type = Some(e.nni()?),
                types::FRESHNESS_PERIOD => m.freshness_ms = Some(e.nni()?),
                _ => m.final_block = Some(Component::decode(e.value)?),
            }
        }
        Ok(m)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        tlv::write_nested(out, types::META_INFO, |v| {
            if let Some(t) = self.content_type {
                tlv::write_nni_tlv(v, types::CONTENT_TYPE, t);
            }
            if let Some(f) = self.freshness_ms {
                tlv::write_nni_tlv(v, types::FRESHNESS_PERIOD, f);
            }
            if let Some(c) = &self.final_block {
                tlv::write_tlv(v, types::FINAL_BLOCK_ID, &c.to_bytes());
            }
        });
    }
}

/// A Data packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo (encoded only if some element is set).
    pub meta: MetaInfo,
    /// Content's value (`None`: no Content element).
    pub content: Option<Vec<u8>>,
    /// SignatureInfo.
    pub signature_info: SignatureInfo,
    /// SignatureValue's value.
    pub signature_value: Vec<u8>,
}

/// What checking a Data's signature found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// DigestSha256 and the SignatureValue is the digest of the signed portion.
    DigestValid,
    /// DigestSha256 and it is not: the Data was altered (or forged); never use it.
    DigestInvalid,
    /// Another signature type: not checked here (needs a key the caller trusts).
    Unverified(SignatureType),
    /// Signed by the trust anchor's key ([`super::trust::check`]).
    KeyValid(SignatureType),
    /// Not signed by the trust anchor's key (another key, another type, a KeyLocator naming
    /// another key, or altered): never use it.
    KeyInvalid(SignatureType),
}

const ORDER: &[u64] = &[types::NAME, types::META_INFO, types::CONTENT, types::SIGNATURE_INFO, types::SIGNATURE_VALUE];

impl Data {
    /// A Data named `name` holding `content`, with DigestSha256 SignatureInfo and an empty
    /// SignatureValue ([`Data::encode_signed`] fills it).
    pub fn new(name: Name, content: impl Into<Vec<u8>>) -> Self {
        Data {
            name,
            meta: MetaInfo::default(),
            content: Some(content.into()),
            signature_info: SignatureInfo::digest_sha256(),
            signature_value: Vec::new(),
        }
    }

    /// Content's bytes (empty if absent).
    pub fn content(&self) -> &[u8] {
        self.content.as_deref().unwrap_or(&[])
    }

    /// Decode a Data without checking its signature.
    pub fn decode(wire: &[u8]) -> Result<Self, Error> {
        Self::decode_inner(wire).map(|(d, _)| d)
    }

    /// Decode a Data and check its signature as far as this codec can
    /// (DigestSha256; others are [`Verification::Unverified`]).
    pub fn decode_verified(wire: &[u8]) -> Result<(Self, Verification), Error> {
        let (d, signed) = Self::decode_inner(wire)?;
        let v = d.digest_verification(signed);
        Ok((d, v))
    }

    /// DigestSha256 checked against `signed` (the signed portion as received); another
    /// signature type is [`Verification::Unverified`].
    pub fn digest_verification(&self, signed: &[u8]) -> Verification {
        match self.signature_info.sig_type {
            SignatureType::DigestSha256 if self.signature_value == sha256(&[signed]) => Verification::DigestValid,
            SignatureType::DigestSha256 => Verification::DigestInvalid,
            t => Verification::Unverified(t),
        }
    }

    /// Decode a Data without checking its signature, with its signed portion (Name through
    /// SignatureInfo, as received) for a check by a key ([`super::trust::TrustAnchor`]).
    pub fn decode_with_signed(wire: &[u8]) -> Result<(Self, &[u8]), Error> {
        Self::decode_inner(wire)
    }

    /// The Data and its signed portion (Name through SignatureInfo, as received).
    fn decode_inner(wire: &[u8]) -> Result<(Self, &[u8]), Error> {
        let top = tlv::read_single(wire, types::DATA, "Data")?;
        let mut el = Ordered::new(top.value, ORDER);
        let name = Name::decode_leading(&mut el)?;
        let (mut meta, mut content, mut info, mut value, mut signed_end) = (MetaInfo::default(), None, None, None, 0);
        while let Some(e) = el.next()? {
            match e.ty {
                types::META_INFO => meta = MetaInfo::decode_value(e.value)?,
                types::CONTENT => content = Some(e.value.to_vec()),
                types::SIGNATURE_INFO => {
                    info = Some(SignatureInfo::decode_value(e.value)?);
                    signed_end = e.offset + e.wire.len();
                }
                _ => value = Some(e.value.to_vec()),
            }
        }
        let signature_info = info.ok_or(Error::Missing("SignatureInfo"))?;
        let signature_value = value.ok_or(Error::Missing("SignatureValue"))?;
        Ok((Data { name, meta, content, signature_info, signature_value }, &top.value[..signed_end]))
    }

    /// The signed portion as [`Data::encode`] writes it.
    fn signed_portion(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.content().len() + self.name.value_len() + 64);
        self.name.encode(&mut v);
        if !self.meta.is_empty() {
            self.meta.encode(&mut v);
        }
        if let Some(c) = &self.content {
            tlv::write_tlv(&mut v, types::CONTENT, c);
        }
        self.signature_info.encode(&mut v);
        v
    }

    fn frame(&self, mut v: Vec<u8>) -> Vec<u8> {
        tlv::write_tlv(&mut v, types::SIGNATURE_VALUE, &self.signature_value);
        let mut out = Vec::with_capacity(v.len() + 8);
        tlv::write_tlv(&mut out, types::DATA, &v);
        out
    }

    /// Encode with the SignatureInfo and SignatureValue as they are (a Data decoded or
    /// signed elsewhere). A decoded Data re-encodes to the bytes received unless the decoder
    /// skipped something (unrecognised non-critical elements, longer-than-needed numbers):
    /// forward the received bytes, not a re-encoding, when the signature matters.
    pub fn encode(&self) -> Vec<u8> {
        self.frame(self.signed_portion())
    }

    /// Sign with DigestSha256 (SignatureInfo set to it, SignatureValue to the digest of the
    /// signed portion) and encode.
    pub fn encode_signed(&mut self) -> Vec<u8> {
        self.signature_info = SignatureInfo::digest_sha256();
        let signed = self.signed_portion();
        self.signature_value = sha256(&[&signed]).to_vec();
        self.frame(signed)
    }

    /// The implicit SHA-256 digest of an encoded Data (SHA-256 of its whole TLV).
    pub fn implicit_digest(wire: &[u8]) -> [u8; 32] {
        sha256(&[wire])
    }

    /// The Data's full name: its name and its implicit digest component.
    pub fn full_name(&self, wire: &[u8]) -> Name {
        self.name.clone().with(Component::implicit_digest(Self::implicit_digest(wire)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ndn::unhex;

    /// ndn-cxx tests/unit/data.t.cpp, DATA1: /local/ndn/prefix, FreshnessPeriod 10 s,
    /// "SUCCESS!", SignatureSha256WithRsa with KeyLocator /test/key/locator; its full name
    /// (same file, "FullName") ends in sha256digest=28bad4b5…53a548.
    pub(crate) const NDN_CXX_DATA1: &str = "06c5 0714 08056c6f63616c 08036e646e 0806707265666978
        1404 19022710 1508 5355434345535321
        161b 1b0101 1c16 0714 080474657374 08036b6579 08076c6f6361746f72
        1780 2fd6f16e806f10beb16f3e31ece3b9ea83304003fca013d9b3c625162da658416962
        56d8b36a387656ea61b232701cb64d101ddc928e52a58a1dd9965ec0620bcf3a9d7fcabea1
        4171857a8b5da964d666b4e98d0c2843eea664e855f61c190bef99251edc78b3a7aa0d1458
        30e5376a6ddb56aca3fc907ab8669c0ef6b764d1";

    #[test]
    fn ndn_cxx_data1() {
        let wire = unhex(NDN_CXX_DATA1);
        let (d, v) = Data::decode_verified(&wire).unwrap();
        assert_eq!(d.name.to_string(), "/local/ndn/prefix");
        assert_eq!(d.meta, MetaInfo { content_type: None, freshness_ms: Some(10_000), final_block: None });
        assert_eq!(d.content(), b"SUCCESS!");
        assert_eq!(d.signature_info.key_locator, Some(KeyLocator::Name("/test/key/locator".parse().unwrap())));
        assert_eq!((v, d.signature_value.len()), (Verification::Unverified(SignatureType::Sha256WithRsa), 128));
        assert_eq!(d.encode(), wire);
        assert_eq!(
            d.full_name(&wire).to_string(),
            "/local/ndn/prefix/sha256digest=28bad4b5275bd392dbb670c75cf0b66f13f7942b21e80f55c0e86b374753a548"
        );
    }

    #[test]
    fn ndn_cxx_decode_cases() {
        // "Minimal": an (arbitrary) 32-byte SignatureValue under DigestSha256: invalid.
        let sv = "1720612a79399e60304a9f701c1ecac7956bf2f1b046e6c6f0d6c29b3fe3a29bad76";
        let (d, v) = Data::decode_verified(&unhex(&format!("062c 0703080144 16031b0100 {sv}"))).unwrap();
        assert_eq!((d.name.to_string(), d.content, v), ("/D".into(), None, Verification::DigestInvalid));
        // "MinimalEmptyName": an empty name is allowed in Data.
        assert!(Data::decode(&unhex("0609 0700 16031b0100 1700")).unwrap().name.is_empty());
        // "UnrecognizedNonCriticalElements": FC00 anywhere after Name is skipped.
        let d = Data::decode(&unhex(&format!("063a 0703080144 fc00 1400 fc00 1500 fc00 16031b0100 fc00 {sv} fc00")));
        assert_eq!(d.unwrap().content, Some(vec![]));
        for (bad, why) in [
            (format!("0630 1400 0703080145 1500 16031b0100 {sv}"), "MetaInfo before Name"),
            (format!("0630 0703080145 1500 1400 16031b0100 {sv}"), "MetaInfo after Content"),
            (format!("0630 0703080145 1400 1500 {sv} 16031b0100"), "SignatureInfo after SignatureValue"),
            (format!("0652 0703080145 1400 1500 16031b0100 {sv}{sv}"), "two SignatureValues"),
            (format!("062e fc00 0703080144 16031b0100 {sv}"), "an element before Name"),
            (format!("0632 0703080145 fb00 1400 1500 16031b0100 {sv}"), "critical type 251"),
            ("0607 16031b0100 1700".into(), "no Name"),
            ("0607 0703080144 1700".into(), "no SignatureInfo"),
            ("0607 0700 16031b0100".into(), "no SignatureValue"),
            ("4202cafe".into(), "not a Data"),
        ] {
            assert!(Data::decode(&unhex(&bad)).is_err(), "{why}");
        }
    }

    #[test]
    fn digest_sha256_signs_the_signed_portion() {
        let mut d = Data::new("/a/seg=0".parse().unwrap(), b"hello".to_vec());
        d.meta.freshness_ms = Some(1000);
        let wire = d.encode_signed();
        // The signed portion by hand: Name, MetaInfo, Content, SignatureInfo.
        let signed = unhex("0706 080161 320100 1404 190203e8 1505 68656c6c6f 1603 1b0100");
        assert_eq!(d.signature_value, sha256(&[&signed]));
        assert_eq!(Data::decode_verified(&wire), Ok((d.clone(), Verification::DigestValid)));
        // Any byte changed in the signed portion: reported invalid (or refused).
        for i in 2..wire.len() - 34 {
            let mut w = wire.clone();
            w[i] ^= 0x20;
            if let Ok((_, v)) = Data::decode_verified(&w) {
                assert_ne!(v, Verification::DigestValid, "byte {i}");
            }
        }
    }

    #[test]
    fn signature_info_variants() {
        // Ed25519 with KeyDigest, and a ValidityPeriod (type 253, critical but recognised).
        let mut d = Data::new("/k".parse().unwrap(), vec![]);
        d.signature_info = SignatureInfo {
            sig_type: SignatureType::Ed25519,
            key_locator: Some(KeyLocator::KeyDigest(vec![1, 2, 3])),
            extensions: unhex(
                "fd00fd26 fd00fe0f 3230323030313031543030303030 30 fd00ff0f 3230333030313031543030303030 30",
            ),
        };
        d.signature_value = vec![7; 64];
        let wire = d.encode();
        assert_eq!(Data::decode_verified(&wire), Ok((d, Verification::Unverified(SignatureType::Ed25519))));
        // An unknown critical element inside SignatureInfo is refused.
        assert!(Data::decode(&unhex("060b 0700 1605 1b0105 fb00 1700")).is_err());
        assert!(Data::decode(&unhex("0609 0700 1603 1c0100 1700")).is_err()); // no SignatureType
    }
}
