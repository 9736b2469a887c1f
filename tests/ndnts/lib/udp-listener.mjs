// A UDP listener for NDNts: one bound socket, one NDN face per remote endpoint.
//
// NDNts's @ndn/node-transport only opens UDP faces towards a server (a connected socket);
// it has no server side. This module is the server side, as NFD's UDP channel is: datagrams
// from a new (address, port) create a face (an L3Face, so NDNLPv2 reassembly, Nacks and
// fragmentation are NDNts's own) on the given logical forwarder; replies to that face go
// back from the listening socket to that endpoint. A face that has received nothing for
// `idleMs` is closed.
//
// It holds transport glue only: no packet encoding or forwarding decisions of its own.

import dgram from "node:dgram";
import { once } from "node:events";

import { L3Face, rxFromPacketIterable, Transport } from "@ndn/l3face";
import { pushable } from "@ndn/util";

// The UDP payload size NDNts's own UdpTransport reports for its unicast faces (just under the
// IPv4 maximum); an administrative MTU (LpService `mtu`) makes NDNts fragment below it.
const UDP_MAX_PAYLOAD = 65487;

/** The transport of one remote endpoint behind a shared listening socket. */
class PeerTransport extends Transport {
  constructor(sock, peer) {
    super({ describe: `UDP(${peer.address}:${peer.port})` });
    this.sock = sock;
    this.peer = peer;
    this.queue = pushable(); // datagrams from this peer, pushed by the listener
    this.rx = rxFromPacketIterable(this.queue);
    this.lastRx = Date.now();
  }

  get mtu() {
    return UDP_MAX_PAYLOAD;
  }

  deliver(msg) {
    this.lastRx = Date.now();
    this.queue.push(msg);
  }

  async tx(iterable) {
    for await (const pkt of iterable) {
      this.sock.send(pkt, this.peer.port, this.peer.address);
    }
  }

  close() {
    this.queue.stop();
  }
}

/**
 * Listen for NDN faces on UDP `host:port` (port 0: any free port).
 * @param {object} opts
 * @param {import("@ndn/fw").Forwarder} opts.fw - Logical forwarder the faces join.
 * @param {number} [opts.mtu] - Fragment outgoing packets to this UDP payload size (NDNLPv2).
 * @param {number} [opts.idleMs] - Close a face after this long without a datagram.
 * @returns {Promise<{address: string, port: number, faces: Map, close: () => void}>}
 */
export async function listenUdp({ host, port, fw, mtu = Infinity, idleMs = 60_000 }) {
  const sock = dgram.createSocket({
    type: host.includes(":") ? "udp6" : "udp4",
    // Large buffers: a consumer's window of Interests arrives in bursts.
    recvBufferSize: 4 << 20,
    sendBufferSize: 4 << 20,
  });
  sock.bind(port, host);
  await once(sock, "listening");

  const faces = new Map(); // "address:port" → { transport, fwFace }
  sock.on("message", (msg, rinfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    let entry = faces.get(key);
    if (!entry) {
      const transport = new PeerTransport(sock, { address: rinfo.address, port: rinfo.port });
      // keepAlive false: no NDNLPv2 IDLE packets towards consumers (NFD sends none either).
      const l3face = new L3Face(transport, {}, { keepAlive: false, mtu });
      const fwFace = fw.addFace(l3face);
      entry = { transport, fwFace };
      faces.set(key, entry);
    }
    entry.transport.deliver(msg);
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [key, { transport, fwFace }] of faces) {
      if (now - transport.lastRx > idleMs) {
        faces.delete(key);
        transport.close();
        fwFace.close();
      }
    }
  }, Math.min(idleMs, 10_000));
  sweep.unref();

  const { address, port: boundPort } = sock.address();
  return {
    address,
    port: boundPort,
    faces,
    close() {
      clearInterval(sweep);
      for (const { transport, fwFace } of faces.values()) {
        transport.close();
        fwFace.close();
      }
      faces.clear();
      sock.close();
    },
  };
}

/** Split "HOST:PORT" or "[V6]:PORT" into { host, port }; the port defaults to NDN's 6363. */
export function parseAddr(addr) {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(addr) ?? /^([^:]+)(?::(\d+))?$/.exec(addr);
  if (!m) {
    throw new Error(`bad address ${addr}: expected HOST:PORT`);
  }
  return { host: m[1], port: m[2] === undefined ? 6363 : Number.parseInt(m[2], 10) };
}
