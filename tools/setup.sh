#!/usr/bin/env bash
# Install what rdtp needs beyond a Rust toolchain, on Debian or Ubuntu: the one set-up command
# of README.md ("Prerequisites"); .ci/run runs it too (with --ci).
#
#   tools/setup.sh           everything: Rust check, g++, python3-venv, ns-3 3.44, iproute2, ethtool,
#                            ping, tshark, python3-matplotlib, libpcap-dev, and the NDNts test
#                            rig's pinned npm packages (tests/ndnts; needs Node.js >= 20.18 with npm),
#                            python-ndn (tests/python-ndn) in .venv-pyndn/
#   tools/setup.sh --ci      what the tests use (all but libpcap-dev; matplotlib: the
#                            testbed's figure test)
#   tools/setup.sh --check   install nothing: say what is missing (exit 1 if anything is)
#
# ns-3 3.44 is the PyPI `ns3` wheel (headers, libraries; no build) installed with pip into the
# project-local virtual environment .venv-ns3/ (git-ignored; RDTP_NS3_PREFIX=DIR puts it
# elsewhere, and crates/rdtp-ns3/build.rs looks there). Needs root or sudo for apt-get, and
# pip's access to PyPI for the wheel (69 MB). Exit 0 when everything asked for is there.
set -euo pipefail

RUST_MIN=1.85 # rust-version in Cargo.toml
NS3_WHEEL=ns3==3.44.post0 # the ns-3 build.rs compiles against (.venv-ns3/)
root=$(cd "$(dirname "$0")/.." && pwd)
ns3_prefix=${RDTP_NS3_PREFIX:-$root/.venv-ns3}
NODE_MIN=20.18 # the pinned @ndn/* packages' "engines" (tests/ndnts/package.json)

# Debian package, what it is for (printed by --check and after a failed install).
TEST_PACKAGES=(
    "g++:compiles rdtp-ns3's C++ glue against ns-3 (C++20)"
    "python3-venv:the virtual environment ns-3 3.44 (PyPI wheel) is installed into"
    "iproute2:ip and ss, for the testbed (root)"
    "ethtool:the testbed's tap checks (root)"
    "iputils-ping:the testbed's RTT under load (root)"
    "tshark:the Wireshark dissector's test (tools/wireshark)"
    "python3-matplotlib:figures of rdtp sim and rdtp testbed (experiments/plot.py), drawn when their runs end"
)
EXTRA_PACKAGES=(
    "libpcap-dev:optional: cargo build --features live (live monitor-mode capture)"
)

mode=all
case "${1:-}" in
    "") ;;
    --ci) mode=ci ;;
    --check) mode=check ;;
    -h | --help)
        sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "tools/setup.sh: unknown option $1 (--ci, --check, --help)" >&2
        exit 2
        ;;
esac

packages=("${TEST_PACKAGES[@]}")
if [ "$mode" != ci ]; then
    packages+=("${EXTRA_PACKAGES[@]}")
fi
started=$SECONDS
status=0

# Rust: rustup's toolchain, at least RUST_MIN.
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
if command -v cargo >/dev/null 2>&1; then
    rust=$(rustc --version 2>/dev/null | awk '{print $2}')
    if version_at_least "${rust:-0}" "$RUST_MIN"; then
        echo "setup: Rust $rust (>= $RUST_MIN) ok"
    else
        echo "setup: Rust ${rust:-?} is older than $RUST_MIN: rustup update stable" >&2
        status=1
    fi
else
    echo "setup: no Rust toolchain: install it with rustup (https://rustup.rs):" >&2
    echo "  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh" >&2
    status=1
fi

missing=()
for p in "${packages[@]}"; do
    name=${p%%:*}
    if ! dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#packages[@]} packages present"
elif [ "$mode" = check ] || ! command -v apt-get >/dev/null 2>&1; then
    [ "$mode" = check ] || echo "setup: no apt-get here: install the equivalents of these by hand" >&2
    for p in "${missing[@]}"; do
        echo "setup: missing ${p%%:*} — ${p#*:}" >&2
    done
    status=1
else
    names=()
    for p in "${missing[@]}"; do names+=("${p%%:*}"); done
    sudo=()
    can_install=yes
    if [ "$(id -u)" != 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "setup: not root and no sudo: cannot install ${names[*]}" >&2
            can_install=no
            status=1
        fi
    fi
    if [ $can_install = yes ]; then
        echo "setup: installing ${names[*]} (apt-get; a few minutes on a fresh machine)"
        if "${sudo[@]}" apt-get update -qq &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${names[@]}" >/dev/null; then
            echo "setup: installed ${names[*]}"
        else
            echo "setup: apt-get failed for ${names[*]}" >&2
            status=1
        fi
    fi
fi

# The figures are drawn by $RDTP_PYTHON, else the `python3` on PATH. Debian's python3-matplotlib
# serves /usr/bin/python3 only: a python3 earlier on PATH (pyenv, conda) may not have it.
path_python=$(command -v "${RDTP_PYTHON:-python3}" || true)
if [ -n "$path_python" ] && ! "$path_python" -c 'import matplotlib' >/dev/null 2>&1 &&
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
    echo "setup: the python3 for figures ($path_python) has no matplotlib, /usr/bin/python3 has it:" \
        "figures need RDTP_PYTHON=/usr/bin/python3 (or: $path_python -m pip install matplotlib)" >&2
fi

# ns-3 3.44: the PyPI wheel in a virtual environment (python3-venv, above). Only the C++
# headers and libraries are used: --no-deps leaves out its Python bindings' cppyy.
ns3_installed() {
    compgen -G "$ns3_prefix/lib/python3*/site-packages/${NS3_WHEEL%%==*}-${NS3_WHEEL#*==}.dist-info" >/dev/null
}
if ns3_installed; then
    echo "setup: ns-3 ${NS3_WHEEL#*==} present in $ns3_prefix"
elif [ "$mode" = check ]; then
    echo "setup: missing ns-3 ${NS3_WHEEL#*==} in $ns3_prefix — rdtp sim, the testbed's emulator and the ns-3 tests (tools/setup.sh installs it with pip)" >&2
    status=1
elif ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "setup: python3 with venv is needed for ns-3 (apt-get install python3-venv)" >&2
    status=1
else
    echo "setup: installing ns-3 from PyPI ($NS3_WHEEL, 69 MB) into $ns3_prefix"
    if python3 -m venv "$ns3_prefix" &&
        "$ns3_prefix/bin/pip" install --quiet --disable-pip-version-check --no-deps "$NS3_WHEEL" &&
        ns3_installed; then
        echo "setup: installed ns-3 ${NS3_WHEEL#*==}"
        # build.rs does not watch a prefix that did not exist (cargo would rerun it on every
        # build): a newer build.rs makes cargo look again and compile rdtp-sim with ns-3.
        touch "$root/crates/rdtp-ns3/build.rs"
    else
        echo "setup: pip could not install $NS3_WHEEL into $ns3_prefix (its wheels are manylinux_2_28 x86-64 builds for several CPython 3 versions; none fits here?)" >&2
        status=1
    fi
fi

# python-ndn (tests/python-ndn): a second independent NDN implementation, from PyPI, pinned by
# its requirements.txt, in the project-local virtual environment .venv-pyndn/ (git-ignored).
pyndn_prefix="$root/.venv-pyndn"
pyndn_req="$root/tests/python-ndn/requirements.txt"
if cmp -s "$pyndn_req" "$pyndn_prefix/.rdtp-installed-requirements" 2>/dev/null; then
    echo "setup: python-ndn present in $pyndn_prefix"
elif [ "$mode" = check ]; then
    echo "setup: missing python-ndn in $pyndn_prefix — the python-ndn interoperability test (tools/setup.sh installs it with pip)" >&2
    status=1
elif python3 -m venv "$pyndn_prefix" &&
    "$pyndn_prefix/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$pyndn_req"; then
    cp "$pyndn_req" "$pyndn_prefix/.rdtp-installed-requirements"
    echo "setup: installed python-ndn into $pyndn_prefix"
else
    echo "setup: pip could not install python-ndn into $pyndn_prefix: its test will skip" >&2
    status=1
fi

# The NDNts test rig (tests/ndnts): an independent NDN stack from the npm registry, pinned by
# its package-lock.json. Debian 12's own nodejs (18) is too old, so node is checked, not
# installed. `npm ci` runs only when the lock file changed since the last install (a stamp in
# node_modules), and prefers npm's cache, so a second run costs nothing.
rig="$root/tests/ndnts"
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    node_version=$(node --version | sed 's/^v//')
    if ! version_at_least "$node_version" "$NODE_MIN"; then
        echo "setup: Node.js $node_version is older than $NODE_MIN: the NDNts rig's tests will skip" >&2
        status=1
    elif cmp -s "$rig/package-lock.json" "$rig/node_modules/.rdtp-installed-lock" 2>/dev/null; then
        echo "setup: NDNts rig ($rig) ok"
    elif [ "$mode" = check ]; then
        echo "setup: the NDNts rig's npm packages are missing or older than its lock file — npm ci --prefix $rig" >&2
        status=1
    elif npm ci --prefix "$rig" --prefer-offline --no-audit --no-fund --loglevel=error >/dev/null; then
        cp "$rig/package-lock.json" "$rig/node_modules/.rdtp-installed-lock"
        echo "setup: installed the NDNts rig's npm packages ($rig)"
    else
        echo "setup: npm ci --prefix $rig failed: the NDNts rig's tests will skip" >&2
        status=1
    fi
else
    echo "setup: no Node.js/npm (>= $NODE_MIN): the NDNts rig's tests (tests/ndnts) will skip" >&2
    status=1
fi

echo "setup: done in $((SECONDS - started)) s$([ $status = 0 ] || echo ', something is missing (above)')"
exit $status
