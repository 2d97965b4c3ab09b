package raftlog

import (
	"fmt"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Encode builds a command entry: t's byte, then msg in msgpack. The
// caller's ACL token never goes into the log (secrets are stored hashed,
// and only in ACL entries): a request that embeds a WriteRequest has its
// AuthToken cleared first, which is safe because the token was checked
// before anything was applied.
func Encode(t structs.MessageType, msg any) ([]byte, error) {
	if w, ok := msg.(interface{ ClearAuthToken() }); ok {
		w.ClearAuthToken()
	}
	body, err := rpcx.Encode(msg)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", t, err)
	}
	buf := make([]byte, 0, len(body)+1)
	buf = append(buf, byte(t))
	return append(buf, body...), nil
}

// Split reads a command entry's type byte: the message type with
// structs.IgnoreUnknownTypeFlag taken off, whether the flag was set, and
// the body that follows. ok is false for an empty entry, which carries no
// message. Split accepts any type byte; only the FSM knows which it can
// apply.
func Split(data []byte) (t structs.MessageType, ignoreUnknown bool, body []byte, ok bool) {
	if len(data) == 0 {
		return 0, false, nil, false
	}
	t = structs.MessageType(data[0])
	ignoreUnknown = t&structs.IgnoreUnknownTypeFlag != 0
	return t &^ structs.IgnoreUnknownTypeFlag, ignoreUnknown, data[1:], true
}

// Decode reads an entry's body (what Split returns) into out, a non-nil
// pointer, with the RPC codec's bounds (rpcx.Decode): a body whose lengths
// are not backed by its bytes, that nests too deeply, that would decode
// into far more than its size, or that has bytes after its value, is
// refused before anything is allocated for it. Decoded values never alias
// body.
func Decode(body []byte, out any) error {
	return rpcx.Decode(body, out)
}
