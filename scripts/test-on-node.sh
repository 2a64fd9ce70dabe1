#!/usr/bin/env bash
# Every project's test suite (`vitest run`, the e2e suite included) on Node.js 22 or 24: the binaries of
# e2e/runtimes (npm packages that ship `node` and its headers), after `npm ci` and a build on the Node
# that installed the workspace. .ci/run calls it for 22 and 24 after Node 20's `npm test`.
#
#   scripts/test-on-node.sh 22|24 [more nx run-many options, e.g. --projects=@aptix/host]
#
# better-sqlite3 (the session store's driver, a native addon) is built from source for that Node, with
# its headers from e2e/runtimes (node-gyp cannot download headers here), and kept beside the other
# builds in the package's lib/binding/node-v<ABI>-<platform>-<arch>/, where the package's loader looks
# for the running Node's ABI: every Node then loads its own build, in every process the tests start.
# Why not node:sqlite: see the comment in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

major="${1:-}"
case "$major" in
  22 | 24) shift ;;
  *)
    echo "usage: scripts/test-on-node.sh 22|24 [nx run-many options]: e2e/runtimes has Node.js 22 and 24" >&2
    exit 2
    ;;
esac

runtime="$PWD/e2e/runtimes/node_modules/node$major"
if [ ! -x "$runtime/bin/node" ]; then npm run runtimes --silent; fi
node_bin="$runtime/bin/node"
addon="$PWD/node_modules/better-sqlite3"
if [ ! -f "$addon/package.json" ]; then
  echo "node_modules/better-sqlite3 is missing: run npm ci first." >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/aptix-node$major-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Where better-sqlite3's loader (the `bindings` package) looks for the build of the Node that runs it.
slot() { "$1" -p '`lib/binding/node-v${process.versions.modules}-${process.platform}-${process.arch}`'; }
loads() { "$1" -e 'process.dlopen({ exports: {} }, process.argv[1])' "$2" 2>/dev/null; }

# npm ci built the addon into build/Release, for the Node that ran it. The loader tries build/Release
# before lib/binding/ and stops at an addon of another ABI there, so that build moves to its own ABI's
# slot first (where that Node still finds it).
installed="$addon/build/Release/better_sqlite3.node"
if [ -f "$installed" ]; then
  if ! loads node "$installed"; then
    echo "node_modules/better-sqlite3/build/Release was not built for $(node --version), the node on PATH: run npm rebuild better-sqlite3 with the Node that installed the workspace." >&2
    exit 1
  fi
  mkdir -p "$addon/$(slot node)"
  mv "$installed" "$addon/$(slot node)/"
fi

target="$addon/$(slot "$node_bin")/better_sqlite3.node"
if ! loads "$node_bin" "$target"; then
  echo "--- building better-sqlite3 $("$node_bin" -p "require('$addon/package.json').version") for node $("$node_bin" --version) (headers from e2e/runtimes)"
  started=$SECONDS
  mkdir "$work/better-sqlite3"
  tar -C "$addon" --exclude=./build --exclude=./lib/binding -cf - . | tar -C "$work/better-sqlite3" -xf -
  # The package's own build script (node-gyp rebuild --release), run by this Node, with its headers:
  # the machine's npm config may name another Node's (nodedir).
  if ! (cd "$work/better-sqlite3" && PATH="$runtime/bin:$PATH" npm_config_nodedir="$runtime" JOBS=max \
    npm run build-release >"$work/build.log" 2>&1); then
    tail -n 40 "$work/build.log" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$target")"
  cp "$work/better-sqlite3/build/Release/better_sqlite3.node" "$target"
  loads "$node_bin" "$target"
  echo "--- built in $((SECONDS - started)) s"
fi

# `node` on PATH is this runtime, for nx, npm, vitest and every child they start by name. Its folder is
# outside node_modules: the e2e suite drops PATH entries under node_modules from its children's PATH.
mkdir "$work/bin"
ln -s "$node_bin" "$work/bin/node"
export PATH="$work/bin:$PATH"
# Any other native build under this Node (the e2e suite installs better-sqlite3 from its registry) takes its headers.
export npm_config_nodedir="$runtime"

echo "--- node $(node --version): every project's tests"
started=$SECONDS
# nx's bin runs on `node` from PATH, this runtime. Builds come from Nx's cache (tsc emits the same files
# on any Node); test results are keyed by `node --version` too (nx.json's nodeVersion input), so they
# never stand in for another runtime's.
status=0
node_modules/.bin/nx run-many -t test --output-style=static "$@" || status=$?
if [ "$status" -eq 0 ]; then outcome=passed; else outcome=FAILED; fi
echo "--- node $(node --version): every project's tests $outcome in $((SECONDS - started)) s"
exit "$status"
