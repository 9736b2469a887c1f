//! Signed Data checked against a key the user trusts: `rdtp fetch --ndn --trust-anchor CERT`.
//!
//! A trust anchor is an NDN certificate ("NDN Certificate Format Version 2.0": a Data of
//! ContentType KEY whose Content is the public key as an X.509 SubjectPublicKeyInfo, DER) for
//! an **Ed25519** key (SignatureType 5, SignatureEd25519: the 64-byte signature of the signed
//! portion, RFC 8032) or an **ECDSA P-256** key (SignatureType 3, SignatureSha256WithEcdsa: a
//! DER-encoded ECDSA signature of the SHA-256 of the signed portion). A Data is valid under
//! the anchor when its signature verifies with the anchor's key and its KeyLocator, if it
//! names a key, names the anchor's (the certificate's name starts with it: `/P/KEY/<id>` of
//! `/P/KEY/<id>/<issuer>/<version>`). This is the simplest trust schema, one key signs
//! everything; certificate chains and schemas such as LightVerSec are not implemented.
//!
//! Only verification: no signing, no key storage, no file access (the front end reads the
//! certificate), no randomness.

use ed25519_dalek::pkcs8::DecodePublicKey as _;
use p256::ecdsa::signature::Verifier as _;

use super::Error;
use super::data::{Data, KeyLocator, SignatureType, Verification, content_type};
use super::name::Name;

/// The public key of a trust anchor.
#[derive(Clone, Debug, PartialEq)]
enum Key {
    Ed25519(ed25519_dalek::VerifyingKey),
    EcdsaP256(p256::ecdsa::VerifyingKey),
}

/// A key the user trusts, from its NDN certificate.
#[derive(Clone, Debug, PartialEq)]
pub struct TrustAnchor {
    /// The certificate's name (`/P/KEY/<id>/<issuer>/<version>`).
    name: Name,
    key: Key,
}

impl TrustAnchor {
    /// The anchor of an encoded NDN certificate (a Data TLV of ContentType KEY holding an
    /// Ed25519 or P-256 SubjectPublicKeyInfo). The certificate's own signature is not checked:
    /// the user vouches for it by giving it.
    pub fn from_certificate(wire: &[u8]) -> Result<Self, Error> {
        let cert = Data::decode(wire)?;
        if cert.meta.content_type != Some(content_type::KEY) {
            return Err(Error::Invalid("certificate: ContentType is not KEY"));
        }
        let spki = cert.content();
        let key = if let Ok(k) = ed25519_dalek::VerifyingKey::from_public_key_der(spki) {
            Key::Ed25519(k)
        } else if let Ok(k) = p256::PublicKey::from_public_key_der(spki) {
            Key::EcdsaP256(k.into())
        } else {
            return Err(Error::Invalid("certificate: not an Ed25519 or ECDSA P-256 public key"));
        };
        Ok(TrustAnchor { name: cert.name, key })
    }

    /// The certificate's name.
    pub fn name(&self) -> &Name {
        &self.name
    }

    /// The SignatureType this anchor's key signs with (5 Ed25519, 3 ECDSA).
    pub fn signature_type(&self) -> SignatureType {
        match self.key {
            Key::Ed25519(_) => SignatureType::Ed25519,
            Key::EcdsaP256(_) => SignatureType::Sha256WithEcdsa,
        }
    }

    /// Whether `data` (decoded, with `signed` its signed portion as received) is signed by
    /// this anchor's key: the right SignatureType, a KeyLocator naming the anchor's key (or
    /// none), and a signature that verifies.
    pub fn verifies(&self, data: &Data, signed: &[u8]) -> bool {
        let info = &data.signature_info;
        if info.sig_type != self.signature_type() {
            return false;
        }
        match &info.key_locator {
            Some(KeyLocator::Name(key)) if !key.is_prefix_of(&self.name) => return false,
            _ => {}
        }
        let sig = &data.signature_value;
        match &self.key {
            Key::Ed25519(k) => {
                ed25519_dalek::Signature::from_slice(sig).is_ok_and(|s| k.verify_strict(signed, &s).is_ok())
            }
            Key::EcdsaP256(k) => p256::ecdsa::Signature::from_der(sig).is_ok_and(|s| k.verify(signed, &s).is_ok()),
        }
    }
}

/// How `data` (with `signed`, its signed portion as received) checks out: DigestSha256 as
/// [`Data::digest_verification`]; any other signature against `anchor` if there is one
/// ([`Verification::KeyValid`] or [`Verification::KeyInvalid`]), else
/// [`Verification::Unverified`].
pub fn check(data: &Data, signed: &[u8], anchor: Option<&TrustAnchor>) -> Verification {
    match (data.signature_info.sig_type, anchor) {
        (SignatureType::DigestSha256, _) | (_, None) => data.digest_verification(signed),
        (t, Some(a)) if a.verifies(data, signed) => Verification::KeyValid(t),
        (t, Some(_)) => Verification::KeyInvalid(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndn::data::{MetaInfo, SignatureInfo};
    use crate::ndn::name::Component;
    use ed25519_dalek::Signer as _;
    use ed25519_dalek::pkcs8::EncodePublicKey as _;

    fn key_name() -> Name {
        "/lab/KEY/%01%02".parse().unwrap()
    }

    /// A certificate for `spki` (unsigned: the anchor does not check it).
    fn certificate(spki: &[u8]) -> Vec<u8> {
        let mut cert =
            Data::new(key_name().with(Component::generic(*b"self")).with(Component::version(1)), spki.to_vec());
        cert.meta = MetaInfo { content_type: Some(content_type::KEY), ..MetaInfo::default() };
        cert.encode_signed()
    }

    /// A segment signed by `sign` with `sig_type` and a KeyLocator naming `locator`, encoded.
    fn signed_segment(sig_type: SignatureType, locator: Name, sign: impl Fn(&[u8]) -> Vec<u8>) -> Vec<u8> {
        let mut d = Data::new("/lab/file/v=1/seg=0".parse().unwrap(), b"signed content".to_vec());
        d.signature_info =
            SignatureInfo { sig_type, key_locator: Some(KeyLocator::Name(locator)), ..SignatureInfo::digest_sha256() };
        // Sign what the encoder writes as the signed portion: encode once with an empty value.
        let unsigned = d.encode();
        let (_, signed) = Data::decode_with_signed(&unsigned).unwrap();
        d.signature_value = sign(signed);
        d.encode()
    }

    fn check(anchor: &TrustAnchor, wire: &[u8]) -> bool {
        let (d, signed) = Data::decode_with_signed(wire).unwrap();
        let ok = anchor.verifies(&d, signed);
        let t = d.signature_info.sig_type;
        assert_eq!(
            super::check(&d, signed, Some(anchor)),
            if ok { Verification::KeyValid(t) } else { Verification::KeyInvalid(t) }
        );
        assert_eq!(super::check(&d, signed, None), Verification::Unverified(t));
        ok
    }

    #[test]
    fn ed25519_and_ecdsa_segments_verify_against_their_anchor_only() {
        let ed = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]);
        let ed_anchor =
            TrustAnchor::from_certificate(&certificate(ed.verifying_key().to_public_key_der().unwrap().as_bytes()))
                .unwrap();
        let ec = p256::ecdsa::SigningKey::from_bytes(&[9u8; 32].into()).unwrap();
        let ec_spki = p256::PublicKey::from(ec.verifying_key()).to_public_key_der().unwrap();
        let ec_anchor = TrustAnchor::from_certificate(&certificate(ec_spki.as_bytes())).unwrap();

        let by_ed = signed_segment(SignatureType::Ed25519, key_name(), |m| ed.sign(m).to_bytes().to_vec());
        let by_ec = signed_segment(SignatureType::Sha256WithEcdsa, key_name(), |m| {
            let s: p256::ecdsa::Signature = ec.sign(m);
            s.to_der().as_bytes().to_vec()
        });
        assert!(check(&ed_anchor, &by_ed));
        assert!(check(&ec_anchor, &by_ec));
        assert!(!check(&ed_anchor, &by_ec), "another key type");
        assert!(!check(&ec_anchor, &by_ed), "another key type");

        // Another Ed25519 key, a flipped content byte, a KeyLocator naming another key.
        let other = ed25519_dalek::SigningKey::from_bytes(&[8u8; 32]);
        assert!(!check(
            &ed_anchor,
            &signed_segment(SignatureType::Ed25519, key_name(), |m| other.sign(m).to_bytes().to_vec())
        ));
        let mut tampered = by_ed.clone();
        let at = tampered.windows(14).position(|w| w == b"signed content").unwrap();
        tampered[at] ^= 1;
        assert!(!check(&ed_anchor, &tampered));
        let elsewhere: Name = "/other/KEY/%01".parse().unwrap();
        assert!(!check(
            &ed_anchor,
            &signed_segment(SignatureType::Ed25519, elsewhere, |m| ed.sign(m).to_bytes().to_vec())
        ));
        // Garbage signatures are refused, not panicked on.
        assert!(!check(&ed_anchor, &signed_segment(SignatureType::Ed25519, key_name(), |_| vec![1, 2, 3])));
        assert!(!check(&ec_anchor, &signed_segment(SignatureType::Sha256WithEcdsa, key_name(), |_| vec![0x30, 0x02])));
    }

    #[test]
    fn certificates_that_are_not_keys_are_refused() {
        assert!(TrustAnchor::from_certificate(b"junk").is_err());
        let mut not_key = Data::new(key_name(), vec![0u8; 44]);
        not_key.meta = MetaInfo { content_type: Some(content_type::KEY), ..MetaInfo::default() };
        assert!(TrustAnchor::from_certificate(&not_key.encode_signed()).is_err(), "not a SubjectPublicKeyInfo");
        let blob = Data::new(key_name(), vec![0u8; 44]).encode_signed();
        assert!(TrustAnchor::from_certificate(&blob).is_err(), "ContentType BLOB");
    }
}
