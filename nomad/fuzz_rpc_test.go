package nomad

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/rpc"
	"reflect"
	"sort"
	"testing"

	"pgregory.net/rapid"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/helper/rpcx"
)

// fuzzMessageLimit is the message size limit of the server codec in the RPC
// fuzz targets: the default's shape at a size fuzz inputs reach.
const fuzzMessageLimit = 1 << 20

// rpcDecodeAllocBudget bounds what the server may allocate to read and
// decode one input's requests into the endpoints' argument types. The codec
// lets a request decode into at most 32 times its size plus 64 KiB
// (rpcx's decode cost check), and the target reads at most 16 requests
// from an input; without the check, one byte may become a whole struct,
// hundreds of bytes.
func rpcDecodeAllocBudget(inputLen int) uint64 {
	return 16*64<<10 + 64*uint64(inputLen)
}

// rpcMethod is one method the server answers, with its argument and reply
// types.
type rpcMethod struct {
	name        string
	args, reply reflect.Type
}

// rpcMethods lists every method of the endpoints the server registers
// (Server.endpoints), by the rule rpcx uses: exported, (args, *reply)
// error. Only the endpoints' method sets are read.
func rpcMethods() []rpcMethod {
	errType := reflect.TypeFor[error]()
	var out []rpcMethod
	for name, e := range (&Server{}).endpoints() {
		typ := reflect.TypeOf(e)
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			mt := m.Type
			if !m.IsExported() || mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != errType || mt.In(2).Kind() != reflect.Pointer {
				continue
			}
			out = append(out, rpcMethod{name: name + "." + m.Name, args: mt.In(1), reply: mt.In(2).Elem()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// newArgs returns a pointer to a new argument value, as the dispatcher
// makes one to decode into.
func (m rpcMethod) newArgs() reflect.Value {
	if m.args.Kind() == reflect.Pointer {
		return reflect.New(m.args.Elem())
	}
	return reflect.New(m.args)
}

// FuzzRPCRequest reads arbitrary bytes as a server reads a connection:
// request headers, and bodies decoded into the argument type of the method
// each header names (or, for a name no endpoint has, of a method chosen by
// the sequence number, so every type gets bytes). Whatever the bytes:
//
//   - nothing panics, and the server allocates at most
//     rpcDecodeAllocBudget, whatever the bytes claim or nest;
//   - a body that decodes is a fixed point: encoded and decoded again (as
//     a follower forwarding it to the leader does) it is the same request.
func FuzzRPCRequest(f *testing.F) {
	methods := rpcMethods()
	byName := map[string]rpcMethod{}
	for _, m := range methods {
		byName[m.name] = m
	}
	for _, seed := range rpcRequestSeeds(f, methods) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		before := fuzzseed.AllocatedBytes()
		var decoded []any
		c := rpcx.NewServerCodec(nopWriter{bytes.NewReader(data)}, fuzzMessageLimit)
		for range 16 {
			var hdr rpc.Request
			if c.ReadRequestHeader(&hdr) != nil {
				break
			}
			m, ok := byName[hdr.ServiceMethod]
			if !ok {
				m = methods[hdr.Seq%uint64(len(methods))]
			}
			argp := m.newArgs()
			if c.ReadRequestBody(argp.Interface()) == nil {
				decoded = append(decoded, argp.Interface())
			}
		}
		if used, budget := fuzzseed.AllocatedBytes()-before, rpcDecodeAllocBudget(len(data)); used > budget {
			t.Fatalf("reading %d bytes as requests allocated %d KiB, more than the %d KiB budget",
				len(data), used>>10, budget>>10)
		}

		for _, v := range decoded {
			b, err := rpcx.Encode(v)
			if err != nil {
				t.Fatalf("a decoded %T cannot be encoded to forward it: %v", v, err)
			}
			again := reflect.New(reflect.TypeOf(v).Elem()).Interface()
			if err := rpcx.Decode(b, again); err != nil {
				t.Fatalf("a re-encoded %T does not decode: %v", v, err)
			}
			if d := fuzzseed.Diff(v, again); d != "" {
				t.Fatalf("a %T changed when encoded and decoded again: %s", v, d)
			}
		}
	})
}

// FuzzRPCRoundTrip draws argument and reply values of every RPC method
// (fuzzseed.Value fills every exported field, at any depth) and checks that
// each one crosses the wire unchanged: what a client sends is what the
// endpoint gets, and what the endpoint answers is what the client reads.
// Raft entries use the same encoding, so this holds for them too.
func FuzzRPCRoundTrip(f *testing.F) {
	methods := rpcMethods()
	// rapid reads its choices from the input, eight bytes a draw, and
	// skips an input that runs out; a value with every field drawn needs a
	// few thousand. The seeds are fixed pseudo-random streams, so the seed
	// corpus is the same on every run.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2 * len(methods) {
		seed := make([]byte, 32<<10)
		for i := range seed {
			seed[i] = byte(rng.Uint32())
		}
		f.Add(seed)
	}
	f.Fuzz(rapid.MakeFuzz(func(t *rapid.T) {
		m := rapid.SampledFrom(methods).Draw(t, "method")
		for _, typ := range []reflect.Type{m.args, m.reply} {
			want := fuzzseed.Value(t, typ)
			b, err := rpcx.Encode(want.Interface())
			if err != nil {
				t.Fatalf("%s: encoding a %s: %v", m.name, typ, err)
			}
			got := reflect.New(typ)
			if err := rpcx.Decode(b, got.Interface()); err != nil {
				t.Fatalf("%s: decoding an encoded %s: %v", m.name, typ, err)
			}
			if d := fuzzseed.Diff(want.Interface(), got.Elem().Interface()); d != "" {
				t.Fatalf("%s: a %s changed on the wire: %s", m.name, typ, d)
			}
		}
	}))
}

// rpcRequestSeeds are one request per method with a zero argument value
// (which spells out every field name the decoder matches) and the request
// bodies of a raft log holding every entry type.
func rpcRequestSeeds(tb testing.TB, methods []rpcMethod) [][]byte {
	msg := func(method string, seq uint64, body []byte) []byte {
		hdr, err := rpcx.Encode(&rpc.Request{ServiceMethod: method, Seq: seq})
		if err != nil {
			tb.Fatal(err)
		}
		return append(hdr, body...)
	}
	var seeds [][]byte
	for i, m := range methods {
		body, err := rpcx.Encode(m.newArgs().Interface())
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, msg(m.name, uint64(i), body))
	}
	for i, e := range buildLog(tb).entries {
		seeds = append(seeds, msg("", uint64(i), e.Data[1:]))
	}
	// Allocation updates as empty maps: one byte each on the wire, a whole
	// structs.Allocation each once decoded.
	const n = 8 << 10
	amplify := []byte{0x81, 0xa5, 'A', 'l', 'l', 'o', 'c', 0xdc, n >> 8, n & 0xff}
	seeds = append(seeds, msg("Node.UpdateAlloc", 1, append(amplify, bytes.Repeat([]byte{0x80}, n)...)))
	return seeds
}

// nopWriter adapts a reader to the codec's io.ReadWriteCloser.
type nopWriter struct{ io.Reader }

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }
