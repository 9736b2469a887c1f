#!/usr/bin/env python3
"""python-ndn consumer: fetch a segmented object from the NDN node at ADDR over UDP.

    fetch.py HOST:PORT NAME OUT

A second NDN implementation nobody here wrote (python-ndn, pinned in requirements.txt and
installed by tools/setup.sh into .venv-pyndn/), besides NDNts (tests/ndnts/). It uses
python-ndn's own segment fetcher: the first Interest with CanBePrefix discovers the version,
then one Interest per segment, in order, until FinalBlockId; each Data's DigestSha256 is
checked by python-ndn (KeychainDigest). Writes the object to OUT, prints one line, exits 0 on
success and 1 on any failure.
"""

import sys
import time

from ndn.app import NDNApp
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.security import KeychainDigest
from ndn.transport.udp_face import UdpFace

if len(sys.argv) != 4:
    sys.exit("usage: fetch.py HOST:PORT NAME OUT")
host, port = sys.argv[1].rsplit(":", 1)
name, out = sys.argv[2], sys.argv[3]
app = NDNApp(face=UdpFace(host, int(port)), keychain=KeychainDigest())
failed = []


async def main():
    started = time.time()
    size = 0
    try:
        with open(out, "wb") as f:
            async for segment in segment_fetcher(app, name, timeout=2000, retry_times=3):
                f.write(bytes(segment))
                size += len(segment)
        print(f"python-ndn: {name}: {size} bytes in {time.time() - started:.3f} s")
    except Exception as e:  # any failure is the test's failure: say which
        failed.append(e)
        print(f"python-ndn: {name}: {type(e).__name__}: {e}", file=sys.stderr)
    finally:
        app.shutdown()


app.run_forever(after_start=main())
sys.exit(1 if failed else 0)
