#!/usr/bin/env bash
# `make proto-breaking` (CI): `buf breaking` of protos/ against the previous commit's protos/.
# A break passes only when this commit adds a line to protos/BREAKING.md (a marked exception).
set -euo pipefail
BUF=${BUF:-.tools/proto/node_modules/.bin/buf}
if ! git rev-parse -q --verify HEAD~1 >/dev/null; then
    echo "proto-breaking: no previous commit to compare with (a shallow clone?); skipped"
    exit 0
fi
prev=$(mktemp -d)
trap 'rm -rf "$prev"' EXIT
git archive HEAD~1 protos | tar -x -C "$prev" 2>/dev/null || true
if [ ! -d "$prev/protos/vance" ]; then
    echo "proto-breaking: the previous commit has no protos; skipped"
    exit 0
fi
if report=$("$BUF" breaking protos --against "$prev/protos" 2>&1); then
    echo "proto-breaking: no breaking change against the previous commit"
    exit 0
fi
echo "$report"
marked=$(git diff HEAD~1 HEAD -- protos/BREAKING.md | grep -E '^\+- ' || true)
if [ -n "$marked" ]; then
    echo "proto-breaking: deliberate, marked in protos/BREAKING.md by this commit:"
    echo "$marked"
    exit 0
fi
echo "proto-breaking: breaking changes against the previous commit; mark a deliberate one in" \
     "protos/BREAKING.md (same commit)" >&2
exit 1
