package raftlog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// A caller's token never reaches the log, and the body decodes back to the
// request without it.
func TestEncodeClearsTheCallersTokens(t *testing.T) {
	req := &structs.GenericWriteRequest{Key: "k", Value: "v"}
	req.AuthToken, req.ServerToken = "caller-secret", "server-secret"
	buf, err := Encode(structs.GenericWriteRequestType, req)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf, []byte("secret")) {
		t.Fatalf("the entry holds a token: %q", buf)
	}
	if buf[0] != byte(structs.GenericWriteRequestType) {
		t.Fatalf("the entry starts with %d, want the type byte %d", buf[0], structs.GenericWriteRequestType)
	}
	var out structs.GenericWriteRequest
	if err := Decode(buf[1:], &out); err != nil {
		t.Fatal(err)
	}
	if out.Key != "k" || out.Value != "v" || out.AuthToken != "" {
		t.Fatalf("decoded %+v", out)
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		typ    structs.MessageType
		ignore bool
		body   []byte
		ok     bool
	}{
		{"empty", nil, 0, false, nil, false},
		{"known type", []byte{byte(structs.JobRegisterRequestType), 0xc0}, structs.JobRegisterRequestType, false, []byte{0xc0}, true},
		{"type only", []byte{byte(structs.NodeRegisterRequestType)}, structs.NodeRegisterRequestType, false, []byte{}, true},
		{"ignore-unknown flag", []byte{byte(structs.IgnoreUnknownTypeFlag | 100), 1, 2}, 100, true, []byte{1, 2}, true},
		{"type no server knows yet", []byte{127, 9}, 127, false, []byte{9}, true},
	}
	for _, c := range cases {
		typ, ignore, body, ok := Split(c.data)
		if typ != c.typ || ignore != c.ignore || !bytes.Equal(body, c.body) || ok != c.ok {
			t.Errorf("%s: Split = %d, %v, %x, %v; want %d, %v, %x, %v", c.name, typ, ignore, body, ok, c.typ, c.ignore, c.body, c.ok)
		}
	}
}

// Decode keeps the codec's bounds: a body claiming more than it holds is
// refused before anything is allocated for it, and so are bytes after the
// value.
func TestDecodeRefusesMalformedBodies(t *testing.T) {
	cases := map[string][]byte{
		// array32 claiming 2^30 elements, with none present
		"a length its bytes do not back": {0xdd, 0x40, 0, 0, 0},
		"bytes after the value":          {0x90, 0x90},
		"nothing":                        {},
	}
	for name, body := range cases {
		var out []string
		if err := Decode(body, &out); err == nil {
			t.Errorf("%s: decoded into %v", name, out)
		}
	}
	// A million empty arrays in 1 MiB would each become a slice header
	// of 24 bytes: the decode-cost check refuses them.
	many := append([]byte{0xdd, 0x00, 0x10, 0x00, 0x00}, bytes.Repeat([]byte{0x90}, 1<<20)...)
	var out [][]string
	err := Decode(many, &out)
	if err == nil {
		t.Fatalf("decoded %d values", len(out))
	}
	if !strings.Contains(err.Error(), "would take more than") {
		t.Fatalf("unexpected error: %v", err)
	}
}
