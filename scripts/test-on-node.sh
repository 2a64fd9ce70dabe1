#!/usr/bin/env bash
# Every project's test suite (`vitest run`, the e2e suite included) on Node.js 22 or 24: the binaries of
# e2e/runtimes (npm packages that ship `node` and its headers), after `npm ci` and a build on the Node
# that installed the workspace. .ci/run calls it for 22 and 24 after Node 20's `npm test`.
#
#   scripts/test-on-node.sh 22|24 [more nx run-many options, e.g. --projects=@aptix/host]
#
# The session store's driver needs no build here: on Node-API 10 (Node 22.14 and later) the store runs on
# better-sqlite3 13 (the npm alias better-sqlite3-13, a Node-API addon whose npm package ships its
# binaries; the workspace root lists it as a dev dependency, since npm ci on Node 20 skips the store's
# optional one by its engines), and better-sqlite3 12 (built from source by npm ci for Node 20) is never
# loaded; a process that loaded it anyway would fail loudly (its build is for Node 20's ABI). This used
# to build 12 from source for each runtime (2 to 3 minutes each on 2 cores). Why: the comment in .ci/run.
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
if [ ! -f node_modules/better-sqlite3-13/package.json ]; then
  echo "node_modules/better-sqlite3-13 is missing: run npm ci first (the workspace root lists it as a dev dependency)." >&2
  exit 1
fi
# The store's driver on this Node: 13 where the runtime has Node-API 10, and its binary loads here.
if ! "$node_bin" -e '
  if (Number(process.versions.napi) < 10) throw new Error(`Node-API ${process.versions.napi}: better-sqlite3 13 needs 10`);
  const Database = require("better-sqlite3-13");
  new Database(":memory:").prepare("SELECT 1").get();
  console.log(`--- session store driver: better-sqlite3 ${require("better-sqlite3-13/package.json").version} (Node-API ${process.versions.napi})`);
'; then
  echo "better-sqlite3 13 does not load on node $("$node_bin" --version): the session store cannot run on it." >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/aptix-node$major-XXXXXX")"
trap 'rm -rf "$work"' EXIT

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
