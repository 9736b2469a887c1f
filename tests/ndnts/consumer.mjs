#!/usr/bin/env node
// NDNts consumer: fetch a segmented object from the NDN node at ADDR over UDP.
//
//   node consumer.mjs --connect 127.0.0.1:6363 --name /P [-o FILE] [--discover rdr|cbp|none]
//                     [--trust CERT] [--json] [--timeout SECONDS]
//
// Version discovery (--discover): `rdr` (default) asks PREFIX/32=metadata for the versioned
// name (named-data.net's RDR), `cbp` sends a CanBePrefix Interest for PREFIX, `none` fetches
// NAME as given. The segments are then fetched by NDNts's `fetch` with its own congestion
// control (TCP CUBIC window, RFC 6298 RTT estimator, up to 15 retransmissions per segment).
// Each Data's signature is checked: DigestSha256 by default; with --trust CERT (an NDN
// certificate, Ed25519 or ECDSA, as a Data TLV: what producer.mjs --ed25519 writes), against
// that key.
//
// Writes the object to FILE (or nowhere without -o), prints one summary line on stdout (or a
// JSON object with --json), exits 0 on success and 1 on any failure, including no complete
// object within --timeout seconds (default 300).

import { readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";

import { Forwarder } from "@ndn/fw";
import { Certificate, createVerifier, SigningAlgorithmListFull } from "@ndn/keychain";
import { AltUri } from "@ndn/naming-convention2";
import { UdpTransport } from "@ndn/node-transport";
import { Data, digestSigning } from "@ndn/packet";
import { retrieveMetadata } from "@ndn/rdr";
import { discoverVersion, fetch, RttEstimator, TcpCubic } from "@ndn/segmented-object";
import { Decoder } from "@ndn/tlv";

import { parseAddr } from "./lib/udp-listener.mjs";

const { values: args } = parseArgs({
  options: {
    connect: { type: "string", default: "127.0.0.1:6363" },
    name: { type: "string" },
    output: { type: "string", short: "o" },
    discover: { type: "string", default: "rdr" },
    trust: { type: "string" },
    json: { type: "boolean", default: false },
    timeout: { type: "string", default: "300" },
  },
});
if (!args.name || !["rdr", "cbp", "none"].includes(args.discover)) {
  console.error("usage: consumer.mjs --connect ADDR --name NAME [-o FILE] [--discover rdr|cbp|none]");
  process.exit(2);
}

setTimeout(() => {
  console.error(`ndnts-consumer: ${args.name}: no complete object within ${args.timeout} s`);
  process.exit(1);
}, Number.parseFloat(args.timeout) * 1000).unref();

const fw = Forwarder.create();
let face;
try {
  // A UDP face towards ADDR, with a default route: every Interest goes there. Socket buffers
  // of 4 MiB (the producer's too) rather than the system's 208 KiB default, so that a window
  // of 8 KB segments is not lost in the receive buffer: a fair baseline beside rdtp's own
  // large buffers. Linux caps them at net.core.rmem_max/wmem_max.
  face = await UdpTransport.createFace({ fw, addRoutes: ["/"] }, {
    ...parseAddr(args.connect),
    recvBufferSize: 4 << 20,
    sendBufferSize: 4 << 20,
  });

  const verifier = args.trust ?
    await createVerifier(Certificate.fromData(new Decoder(await readFile(args.trust)).decode(Data)), {
      algoList: SigningAlgorithmListFull,
    }) :
    digestSigning;
  const cOpts = { fw, verifier, retx: 4 };

  const started = performance.now();
  let name = AltUri.parseName(args.name); // accepts v=, seg=, 32=metadata …
  if (args.discover === "rdr") {
    name = (await retrieveMetadata(name, cOpts)).name;
  } else if (args.discover === "cbp") {
    name = await discoverVersion(name, { cOpts });
  }

  // Count every Interest the fetcher sends: those beyond one per segment are retransmissions.
  let interests = 0;
  const rtte = new RttEstimator();
  const ca = new TcpCubic();
  const result = fetch(name, { fw, rtte, ca, modifyInterest: () => void ++interests });
  // Segments in order; each is verified here (not by fetch's own `verifier` option: in this
  // NDNts version a failed verification there leaves the fetch hanging instead of failing).
  const chunks = [];
  for await (const data of result) {
    await verifier.verify(data);
    chunks.push(data.content);
  }
  const bytes = Buffer.concat(chunks);
  const seconds = (performance.now() - started) / 1000;
  if (args.output) {
    await writeFile(args.output, bytes);
  }

  const summary = {
    name: AltUri.ofName(name),
    bytes: bytes.length,
    segments: result.count,
    interests,
    retransmissions: interests - result.count,
    seconds: Number(seconds.toFixed(3)),
    goodput_mbps: Number(((bytes.length * 8) / seconds / 1e6).toFixed(2)),
    srtt_ms: Number(rtte.sRtt.toFixed(2)),
    final_cwnd: Number(ca.cwnd.toFixed(1)),
  };
  console.log(
    args.json ?
      JSON.stringify(summary) :
      `ndnts-consumer: ${summary.name}: ${summary.bytes} bytes, ${summary.segments} segments, ` +
        `${summary.retransmissions} retransmissions, ${summary.seconds} s, ` +
        `${summary.goodput_mbps} Mbit/s, srtt ${summary.srtt_ms} ms`,
  );
} catch (err) {
  console.error(`ndnts-consumer: ${args.name}: ${err?.message ?? err}`);
  process.exitCode = 1;
} finally {
  face?.close();
  fw.close();
}
// Nothing else should keep the process alive; make sure it ends.
setTimeout(() => process.exit(), 100).unref();
