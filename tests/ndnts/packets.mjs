#!/usr/bin/env node
// Emit real NDNts packets as hex test vectors into vectors.json (beside this file, or the
// path given as the only argument), so Rust tests can check rdtp's NDN codec without node.
//
//   node packets.mjs [OUT.json]
//
// Every packet is encoded by NDNts itself (@ndn/packet, @ndn/lp, @ndn/keychain); this program
// only chooses the fields. The output is deterministic (fixed Nonces, fixed keys, a fixed
// fragment sequence number) except the ECDSA signature, which WebCrypto randomizes: running it
// again rewrites vectors.json identically but for that one vector's signature bytes. Before
// writing, NDNts decodes its own output back (signatures verified, fragments reassembled).
//
// The vectors (each has `hex` and the fields a decoder should find):
//   interest            Interest with Nonce, InterestLifetime, HopLimit (bare TLV, as NFD sends)
//   interest_discovery  RDR discovery Interest: PREFIX/32=metadata, CanBePrefix, MustBeFresh
//   interest_pit_token  the LpPacket NDNts's consumer sends over UDP: PitToken + Interest
//   data_digest         a segment: versioned name, FreshnessPeriod, FinalBlockId, DigestSha256
//   data_ed25519        the same segment signed with Ed25519, + key's SPKI and certificate
//   data_ecdsa          the same segment signed with ECDSA P-256, + SPKI and certificate
//   rdr_metadata        the RDR metadata Data naming the versioned object
//   nack                LpPacket Nack (reason NoRoute) carrying the Interest
//   idle                LpPacket with no fragment (NDNLPv2 IDLE/keep-alive)
//   fragments           an 8800-byte Data cut by NDNLPv2 into LpPackets of ≤ 1472 bytes
//                       (the UDP payload of a 1500-byte IPv4 path)

import { createECDH, createPrivateKey, createPublicKey } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Certificate, createVerifier, ECDSA, Ed25519, generateSigningKey, SigningAlgorithmListFull } from "@ndn/keychain";
import { Fragmenter, LpPacket, LpService, Reassembler } from "@ndn/lp";
import { AltUri, Segment, Version } from "@ndn/naming-convention2";
import { Data, digestSigning, Interest, Nack, NackHeader, NackReason, ValidityPeriod } from "@ndn/packet";
import { Metadata, makeDiscoveryInterest, makeMetadataPacket } from "@ndn/rdr";
import { Decoder, Encoder } from "@ndn/tlv";
import { assert, fromHex, toHex } from "@ndn/util";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2] ?? path.join(here, "vectors.json");

const hex = (bytes) => toHex(bytes).toLowerCase();
const uri = (name) => AltUri.ofName(name);
const PREFIX = AltUri.parseName("/rdtp/vector");
const VERSION = 1_700_000_000_000; // a fixed version number (ms since the epoch, as NDNts's)
const versioned = PREFIX.append(Version, VERSION);

// Fixed test keys (never use these for anything else): Ed25519 from a 32-byte seed, ECDSA
// P-256 from a fixed private scalar, both wrapped as PKCS#8 + SPKI for NDNts's importPkcs8.
function derPair(privateKey) {
  const pkcs8 = privateKey.export({ format: "der", type: "pkcs8" });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  return [new Uint8Array(pkcs8), new Uint8Array(spki)];
}
function ed25519Pair() {
  const seed = Buffer.alloc(32, 0x42);
  const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex"); // RFC 8410
  return derPair(createPrivateKey({ key: Buffer.concat([pkcs8Prefix, seed]), format: "der", type: "pkcs8" }));
}
function ecdsaPair() {
  const d = Buffer.alloc(32, 0x17);
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey(); // 04 || x || y
  const b64 = (b) => b.toString("base64url");
  return derPair(createPrivateKey({
    key: { kty: "EC", crv: "P-256", d: b64(d), x: b64(pub.subarray(1, 33)), y: b64(pub.subarray(33)) },
    format: "jwk",
  }));
}

// A signing key with a fixed key name and a self-signed certificate with a fixed name and
// validity, so the certificate bytes do not depend on the clock.
async function signingKey(algo, [pkcs8, spki], keyId) {
  const keyName = PREFIX.append("KEY", keyId);
  const [signer] = await generateSigningKey(keyName, algo, { importPkcs8: [pkcs8, spki] });
  const cert = await Certificate.build({
    name: keyName.append("self", Version.create(1)),
    validity: new ValidityPeriod(Date.UTC(2024, 0, 1), Date.UTC(2044, 0, 1)),
    publicKeySpki: spki,
    signer,
  });
  return { signer, spki, cert };
}

// The fields of a Data that a decoder should recover.
function dataFields(data, wire) {
  return {
    hex: hex(wire),
    name: uri(data.name),
    name_canonical: data.name.toString(),
    content_hex: hex(data.content),
    freshness_period_ms: data.freshnessPeriod,
    final_block_id: data.finalBlockId ? AltUri.ofComponent(data.finalBlockId) : null,
    sig_type: data.sigInfo.type,
    key_locator: data.sigInfo.keyLocator?.name ? uri(data.sigInfo.keyLocator.name) : null,
  };
}

async function segment(signer, content) {
  const data = new Data(versioned.append(Segment, 0), Data.FreshnessPeriod(10_000), content);
  data.finalBlockId = Segment.create(0);
  await signer.sign(data);
  return data;
}

const vectors = {
  _about:
    "NDN packets encoded by NDNts (@ndn/* 0.0.20250122, tests/ndnts/package.json) for rdtp's " +
    "NDN codec tests; regenerate with `node tests/ndnts/packets.mjs` (see tests/ndnts/README.md).",
};

// Interests: bare TLV (an NDN forwarder such as NFD sends these without an LpPacket).
const interest = new Interest(versioned.append(Segment, 3), Interest.Nonce(0x01020304), Interest.Lifetime(4000), Interest.HopLimit(64));
vectors.interest = {
  hex: hex(Encoder.encode(interest)),
  name: uri(interest.name),
  name_canonical: interest.name.toString(),
  nonce: interest.nonce,
  lifetime_ms: interest.lifetime,
  hop_limit: interest.hopLimit,
  can_be_prefix: interest.canBePrefix,
  must_be_fresh: interest.mustBeFresh,
};
const discovery = makeDiscoveryInterest(PREFIX);
discovery.nonce = 0x0a0b0c0d;
vectors.interest_discovery = {
  hex: hex(Encoder.encode(discovery)),
  name: uri(discovery.name),
  nonce: discovery.nonce,
  lifetime_ms: discovery.lifetime,
  can_be_prefix: discovery.canBePrefix,
  must_be_fresh: discovery.mustBeFresh,
};

// What NDNts's L3Face puts on a UDP socket for a consumer's Interest: an LpPacket carrying a
// 6-byte PitToken (a producer must echo it on the Data, or the consumer's forwarder falls
// back to matching by name).
const lpTransport = { mtu: 1472 };
const lp = new LpService({ keepAlive: false }, lpTransport);
async function lpEncode(pkt) {
  const wires = [];
  for await (const w of lp.tx((async function* () { yield pkt; })())) {
    wires.push(w);
  }
  return wires;
}
const pitToken = Uint8Array.of(0x12, 0x34, 0x00, 0x00, 0x00, 0x03);
const [lpInterest] = await lpEncode({ l3: interest, token: pitToken });
vectors.interest_pit_token = {
  hex: hex(lpInterest),
  pit_token_hex: hex(pitToken),
  interest_hex: vectors.interest.hex,
};

// Data: one segment under each signature type.
const content = new TextEncoder().encode("rdtp NDN test vector: segment 0 of 1\n");
const dDigest = await segment(digestSigning, content);
vectors.data_digest = dataFields(dDigest, Encoder.encode(dDigest));

for (const [key, algo, pair, keyId] of [
  ["data_ed25519", Ed25519, ed25519Pair(), "ed25519"],
  ["data_ecdsa", ECDSA, ecdsaPair(), "ecdsa"],
]) {
  const { signer, spki, cert } = await signingKey(algo, pair, keyId);
  const data = await segment(signer, content);
  vectors[key] = {
    ...dataFields(data, Encoder.encode(data)),
    public_key_spki_hex: hex(spki),
    certificate_hex: hex(Encoder.encode(cert.data)),
    certificate_name: uri(cert.name),
  };
}
vectors.data_ecdsa.note = "ECDSA signatures are randomized: these bytes change when regenerated";

// RDR metadata for the versioned object (what producer.mjs answers to interest_discovery).
const metadata = new Metadata(versioned);
const meta = await makeMetadataPacket(metadata, { prefix: PREFIX, signer: digestSigning });
meta.name = PREFIX.append(meta.name.at(PREFIX.length), Version.create(VERSION), Segment.create(0));
await digestSigning.sign(meta);
vectors.rdr_metadata = {
  ...dataFields(meta, Encoder.encode(meta)),
  metadata_name: uri(versioned),
};

// LpPacket Nack: the Interest sent back with a NackReason.
const [lpNack] = await lpEncode({ l3: new Nack(interest, new NackHeader(NackReason.NoRoute)) });
vectors.nack = {
  hex: hex(lpNack),
  reason: NackReason.NoRoute,
  interest_hex: vectors.interest.hex,
};

// NDNLPv2 IDLE: an LpPacket with no fragment.
vectors.idle = { hex: hex(Encoder.encode(new LpPacket())) };

// An 8800-byte Data (Hu et al.'s 8600-byte payloads plus headers are of that order), fragmented
// at 1472 bytes with a fixed first sequence number.
let big;
for (let len = 8800; ; --len) {
  big = await segment(digestSigning, new Uint8Array(len).map((_, i) => (i * 7 + 3) & 0xff));
  if (Encoder.encode(big).length <= 8800) {
    break;
  }
}
const bigWire = Encoder.encode(big);
const fragmenter = new Fragmenter();
fragmenter.seqNumGen.current = 0x1000n - 1n; // first fragment gets sequence number 0x1000
const full = new LpPacket();
full.payload = bigWire;
const fragments = fragmenter.fragment(full, lpTransport.mtu).map((f) => Encoder.encode(f, lpTransport.mtu));
vectors.fragments = {
  mtu: lpTransport.mtu,
  data_hex: hex(bigWire),
  data_len: bigWire.length,
  name: uri(big.name),
  first_seq: 0x1000,
  fragments_hex: fragments.map(hex),
  fragment_lens: fragments.map((f) => f.length),
};

// Self-check with NDNts's own decoders: signed Data verify against their certificates, the
// fragments reassemble to the 8800-byte Data.
for (const key of ["data_ed25519", "data_ecdsa"]) {
  const cert = Certificate.fromData(new Decoder(fromHex(vectors[key].certificate_hex)).decode(Data));
  const verifier = await createVerifier(cert, { algoList: SigningAlgorithmListFull });
  await verifier.verify(new Decoder(fromHex(vectors[key].hex)).decode(Data));
}
await digestSigning.verify(new Decoder(fromHex(vectors.data_digest.hex)).decode(Data));
const reassembler = new Reassembler(4);
let whole;
for (const f of vectors.fragments.fragments_hex) {
  whole = reassembler.accept(new Decoder(fromHex(f)).decode(LpPacket)) ?? whole;
}
assert(hex(whole.payload) === vectors.fragments.data_hex, "fragments do not reassemble");

await writeFile(out, `${JSON.stringify(vectors, null, 2)}\n`);
console.log(`packets: ${Object.keys(vectors).length - 1} vectors written to ${out}`);
