#!/usr/bin/env bash
# Builds FerretDB v1.24.2 (SQLite backend) into .tools/bin from the module source that the Go
# module proxy serves (checked against the Go checksum database).
#
# Six departures from a bare `go install ...@v1.24.2`, each measured (see docs/operations.md):
#  * that binary panics at start ("Invalid build/version/version.txt"): the module zip carries no
#    version file, so we write it;
#  * its SQLite backend never uses the _id index (the query spells the path differently from the
#    index, and only a filter that is exactly {_id: x} is pushed down), so every update is a full
#    table scan: 35 ms at 5,000 documents. sqlite-id-pushdown.patch fixes both and pushes down
#    {_id: {$in: [...]}}; FerretDB still re-applies the whole filter to what SQLite returns;
#  * update, findAndModify and delete read the matching documents and write them back in a
#    separate statement, so two concurrent compare-and-set commands on one document could both
#    succeed (seen as two turns of one process); atomic-writes.patch serializes those commands.
#  * an update command keeps every statement's query open until the whole command ends, and a
#    statement limited to one document holds its SQLite connection meanwhile; 100 such statements
#    exhaust the 100-connection pool and the server hangs for good (with atomic-writes.patch,
#    every later write too). update-connections.patch closes each statement's query at once.
#  * every iterator's lifetime is tracked with a captured stack and a finalizer that panics when
#    it is not closed (a leak detector for FerretDB's own tests), about 7% of its CPU under
#    load; resource-tracking.patch keeps that to debug builds.
#  * every stored document is decoded several times over with encoding/json (a fifth of its CPU
#    under load); sjson-one-pass.patch reads it once, and falls back to upstream's decoder for
#    anything it does not expect.
set -euo pipefail
VERSION=v1.24.2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tools="$root/.tools"
bin="$tools/bin/ferretdb"
stamp="$tools/ferretdb.stamp"
want="$VERSION $(cat "$here"/*.patch | sha256sum | cut -c1-16)"

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "install-ferretdb: Go is needed to build FerretDB (apt-get install golang)" >&2; exit 1; }

echo "building FerretDB $VERSION into $bin (once; later runs reuse it)" >&2
export GOFLAGS=-buildvcs=false
dir=$(go mod download -json "github.com/FerretDB/FerretDB@$VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
src="$tools/src/ferretdb-$VERSION"
rm -rf "$src"
mkdir -p "$tools/src" "$tools/bin"
cp -r "$dir" "$src"
chmod -R u+w "$src"
echo "$VERSION" > "$src/build/version/version.txt"
for p in "$here"/*.patch; do
  (cd "$src" && patch -p1 --quiet < "$p")
done
(cd "$src" && go build -trimpath -o "$bin" ./cmd/ferretdb)
echo "$want" > "$stamp"
"$bin" --version | sed -n 1p >&2
