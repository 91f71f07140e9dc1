#!/usr/bin/env bash
# Builds FerretDB v1.24.2 (SQLite backend) into .tools/bin from the module source that the Go
# module proxy serves (checked against the Go checksum database).
#
# Seventeen departures from a bare `go install ...@v1.24.2`, each measured (see docs/operations.md):
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
#  * it keeps up to 100 idle SQLite connections for good, each with its page cache and prepared
#    statements, so a burst's connections held their memory (store RSS 203 -> 839 -> 320 MB in
#    8 minutes of chat); sqlite-idle-connections.patch lets the environment bound them
#    (vance/embedded_store.py sets FERRETDB_SQLITE_MAX_IDLE_CONNS and _CONN_IDLE_S).
#  * its SQLite driver (modernc.org/sqlite) parses and plans every statement on every execution;
#    sqlite/statement-cache.patch keeps prepared statements per connection (64, the one unused
#    longest making room for a new text). The driver is
#    built from a tree of links to the module's files, with the patched files copied, and
#    FerretDB's go.mod points at it (a `replace`).
#  * every stored document is encoded through encoding/json key by key and value by value, each
#    into a buffer of its own (a tenth of its CPU under load); sjson-write-one-pass.patch writes
#    the same bytes in one pass (its test compares them with upstream's on every type).
#  * every request is decoded and converted twice (once for the command name and comment, once
#    by the handler), and every request and response document is decoded once more only to look
#    for NaN (together 7-8% of its CPU); wire-decode-once.patch converts a request once and
#    looks for NaN in what the handler decoded, answering BadValue instead of closing the
#    connection.
#  * an insert of one document or an update of one runs BEGIN, its statement and COMMIT, and
#    sqlite3_exec parses BEGIN and COMMIT anew each time; write-autocommit.patch runs the one
#    statement on its own (SQLite makes it atomic by itself).
#  * every command's parameters are read into a struct by reflection, and every field's tag
#    was split and parsed again for every key (a twelfth of its CPU in compare-and-sets and
#    inserts); params-tag-cache.patch parses each struct's tags once.
#  * FerretDB's only index is on `_ferretdb_sjson->"_id"`, and SQLite evaluates that by
#    converting the whole stored document to its binary JSON first: twice per updated document
#    (the old key and the new) and once per insert, 11% of the store's CPU under
#    `--rounds realpace200`. sqlite/json-extract-fast.patch finds a top-level string or integer
#    member in strict JSON text directly, and leaves anything else to SQLite (its test checks
#    both give the same answers, and an index through inserts, updates and deletes).
#  * update and findAndModify wrote each matching document while the query that found it was
#    still open on its own SQLite connection, so the write took a second connection, and the
#    next command (the pool hands out the connection returned last) found its page cache
#    dropped, another connection having committed (WAL mode). read-then-write.patch reads the
#    matches and closes the query first: one connection reads and writes, its cache kept.
#  * the one-pass decoder kept each parsed schema at four times its text in heap (a leaf and a
#    type name allocated per field of every schema), half of the store's live heap under
#    `--rounds realpace200`, which GOGC multiplies; and it allocated every string of the schema
#    text, and every key, of every document it decoded, only to compare or skip them.
#    sjson-schema-share.patch shares leaves, type names and key strings (2.3x the text instead
#    of 4.3x) and compares and skips without allocating (a 41-field document: 161 allocations
#    to 7).
#  * every document read was copied three times on its way to the decoder: the driver copied
#    SQLite's text into a slice and the slice into a string (sqlite/column-text-once.patch:
#    one copy), and database/sql copied the string into a new []byte per row
#    (query-iterator-buffer.patch scans into one reused sql.RawBytes, and reads the columns
#    once per query instead of once per row).
set -euo pipefail
VERSION=v1.24.2
SQLITE_VERSION=v1.32.0 # the modernc.org/sqlite that FerretDB's go.mod requires
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tools="$root/.tools"
bin="$tools/bin/ferretdb"
stamp="$tools/ferretdb.stamp"
want="$VERSION $(cat "$here"/*.patch "$here"/sqlite/*.patch | sha256sum | cut -c1-16) marker-1"
# The binary reports which of our patches it carries (`ferretdb --version`, "package:"), and
# vance/embedded_store.py refuses one without them: an unpatched ferretdb on PATH would let two
# compare-and-sets on one document both win.
patches=$(cd "$here" && ls *.patch sqlite/*.patch | sed 's|.*/||; s|\.patch$||' | sort | paste -sd, -)

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "install-ferretdb: Go is needed to build FerretDB (apt-get install golang)" >&2; exit 1; }

echo "building FerretDB $VERSION into $bin (once; later runs reuse it)" >&2
export GOFLAGS=-buildvcs=false
module_dir() { go mod download -json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'; }
dir=$(module_dir "github.com/FerretDB/FerretDB@$VERSION")
src="$tools/src/ferretdb-$VERSION"
rm -rf "$src"
mkdir -p "$tools/src" "$tools/bin"
cp -r "$dir" "$src"
chmod -R u+w "$src"
echo "$VERSION" > "$src/build/version/version.txt"
echo "vancetope-patches:$patches" > "$src/build/version/package.txt"
for p in "$here"/*.patch; do
  (cd "$src" && patch -p1 --quiet < "$p")
done

sqlite_dir=$(module_dir "modernc.org/sqlite@$SQLITE_VERSION")
sqlite_src="$tools/src/modernc-sqlite-$SQLITE_VERSION"
[[ -d "$sqlite_src" ]] && chmod -R u+w "$sqlite_src"
rm -rf "$sqlite_src"
mkdir -p "$sqlite_src"
cp -as "$sqlite_dir/." "$sqlite_src/" # links: the module is 230 MB of generated C-to-Go
find "$sqlite_src" -type d -exec chmod u+w {} + # cp -a kept the module cache's read-only modes
# Replaces the link to a module file with a writable copy (or drops it, for a file that only a
# patch creates).
own() {
  # A file an earlier patch already changed stays as that patch left it.
  [[ -f "$sqlite_src/$1" && ! -L "$sqlite_src/$1" && -n "${2:-}" ]] && return
  rm -f "$sqlite_src/$1"
  if [[ -f "$sqlite_dir/$1" ]]; then cp "$sqlite_dir/$1" "$sqlite_src/$1"; chmod u+w "$sqlite_src/$1"; fi
}
for f in embed.db embed2.db; do own "$f"; done # its tests embed these; go:embed takes no links
for p in "$here"/sqlite/*.patch; do
  for f in $(sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p"); do own "$f" patched; done
  (cd "$sqlite_src" && patch -p1 --quiet < "$p")
done
(cd "$src" && go mod edit -replace "modernc.org/sqlite=$sqlite_src")

# The patches that bring tests of their own run them before the binary is built. FerretDB's test
# helpers look for a .git directory above the working directory.
[[ -e "$src/.git" ]] || mkdir "$src/.git"
(cd "$src" && go test -count=1 ./internal/handler/sjson/ >&2)
(cd "$src" && go test -count=1 -run 'TestQueryIteratorReusedBuffer' ./internal/backends/sqlite/ >&2)
(cd "$sqlite_src" && go test -count=1 -run 'TestStatementCache|TestJSONExtractFast|TestColumnTextCopiedOnce' . >&2)
(cd "$src" && go build -trimpath -o "$bin" ./cmd/ferretdb)
echo "$want" > "$stamp"
"$bin" --version | sed -n 1p >&2
