#!/usr/bin/env node
// NDNts producer: serve one file as a segmented object over a UDP face that listens on ADDR.
//
//   node producer.mjs --prefix /P --file FILE [--listen 127.0.0.1:6363] [--segment-size 8000]
//                     [--version N] [--no-metadata] [--ed25519 CERT_OUT] [--mtu BYTES]
//
// Publishes PREFIX/v=<version>/seg=<n> (naming conventions rev. 3: version 54=, segment 50=)
// with FinalBlockId on every segment, answers RDR discovery (PREFIX/32=metadata, CanBePrefix +
// MustBeFresh) with the versioned name unless --no-metadata, and answers CanBePrefix Interests
// for PREFIX with segment 0 (NDNts's own version discovery). Data are signed with DigestSha256,
// or with a fresh Ed25519 key whose self-signed certificate (a Data TLV) is written to CERT_OUT.
// The segment size defaults to ndnputchunks's 8000 bytes (Hu et al. use 8600).
//
// Prints one line on stdout when ready, ending " on HOST:PORT" (the bound port if --listen
// asked for port 0), then serves until killed.

import { writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";

import { Forwarder } from "@ndn/fw";
import { Certificate, Ed25519, generateSigningKey } from "@ndn/keychain";
import { AltUri } from "@ndn/naming-convention2";
import { digestSigning } from "@ndn/packet";
import { Metadata, serveMetadata } from "@ndn/rdr";
import { FileChunkSource, serveVersioned } from "@ndn/segmented-object";
import { Encoder } from "@ndn/tlv";

import { listenUdp, parseAddr } from "./lib/udp-listener.mjs";

const { values: args } = parseArgs({
  options: {
    listen: { type: "string", default: "127.0.0.1:6363" },
    prefix: { type: "string" },
    file: { type: "string" },
    "segment-size": { type: "string", default: "8000" },
    version: { type: "string" },
    "no-metadata": { type: "boolean", default: false },
    ed25519: { type: "string" },
    mtu: { type: "string" },
  },
});
if (!args.prefix || !args.file) {
  console.error("usage: producer.mjs --prefix PREFIX --file FILE [--listen ADDR] [options]");
  process.exit(2);
}

const fw = Forwarder.create();
const prefix = AltUri.parseName(args.prefix);
const chunkSize = Number.parseInt(args["segment-size"], 10);

// The signer: DigestSha256 (ndnputchunks's default), or Ed25519 with a self-signed certificate.
let signer = digestSigning;
let signing = "DigestSha256";
if (args.ed25519) {
  const [privateKey, publicKey] = await generateSigningKey(prefix, Ed25519);
  const cert = await Certificate.selfSign({ privateKey, publicKey });
  await writeFile(args.ed25519, Encoder.encode(cert.data));
  signer = privateKey;
  signing = `Ed25519 ${AltUri.ofName(privateKey.name)}`;
}

const server = serveVersioned(prefix, new FileChunkSource(args.file, { chunkSize }), {
  version: args.version === undefined ? undefined : Number.parseInt(args.version, 10),
  signer,
  pOpts: { fw },
});
// RDR (named-data.net's "Realtime Data Retrieval"): PREFIX/32=metadata → the versioned name.
if (!args["no-metadata"]) {
  serveMetadata(new Metadata(server.prefix), { prefix, signer, pOpts: { fw } });
}

const listener = await listenUdp({
  ...parseAddr(args.listen),
  fw,
  mtu: args.mtu === undefined ? Infinity : Number.parseInt(args.mtu, 10),
});
const host = listener.address.includes(":") ? `[${listener.address}]` : listener.address;
console.log(
  `ndnts-producer: serving ${AltUri.ofName(server.prefix)} (${chunkSize}-byte segments, ${signing}` +
    `${args["no-metadata"] ? ", no RDR metadata" : ""}) on ${host}:${listener.port}`,
);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    listener.close();
    server.close();
    fw.close();
    process.exit(0);
  });
}
