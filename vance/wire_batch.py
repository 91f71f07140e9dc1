"""A batch message's encoding, framed around its messages' own encodings (the worker stream's
`WorkerBatch` and `DispatchBatch`, protos/vance/internal/v1/worker.proto)."""

from __future__ import annotations

from collections.abc import Sequence

_LENGTH_DELIMITED = 2


def batch_wire(oneof_field: int, messages: Sequence[bytes]) -> bytes:
    """What a stream message encodes to whose oneof field `oneof_field` holds a batch (a
    message whose field 1 is `repeated` of the stream's message type) of `messages`, each
    already encoded, in order; one message goes as itself. Framed here, so each message is
    encoded once (its size is its length), not sized, copied into the batch and encoded again
    (about half of a message's cost on the way out, issue 28)."""
    if len(messages) == 1:
        return messages[0]
    inner = b"".join([part for m in messages for part in (_MESSAGES_TAG, _varint(len(m)), m)])
    return b"".join((_tag(oneof_field), _varint(len(inner)), inner))


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(field: int) -> bytes:
    return _varint(field << 3 | _LENGTH_DELIMITED)


_MESSAGES_TAG = _tag(1)
