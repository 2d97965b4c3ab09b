package rpcx

import (
	"errors"
	"fmt"
	"go/token"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// registry maps "Service.Method" names to the methods the dispatcher calls.
// It accepts the same methods net/rpc does, so an endpoint written for one
// works with the other:
//
//	func (t *T) Name(args A, reply *R) error
//
// with the method exported, A and R exported or builtin types, and A either
// a pointer or a value.
//
// Lookups happen on every call from every connection, so the table is an
// immutable map behind an atomic pointer: registering copies it, looking up
// takes no lock.
type registry struct {
	mu       sync.Mutex // serialises writers
	services atomic.Pointer[map[string]*service]
}

// service is one registered receiver.
type service struct {
	rcvr    reflect.Value
	methods map[string]*method
}

// method is one callable method of a service.
type method struct {
	fn        reflect.Value // the method expression: receiver is its first argument
	argType   reflect.Type  // A
	replyType reflect.Type  // *R
}

var typeOfError = reflect.TypeFor[error]()

// register publishes rcvr's suitable methods under name. Like net/rpc it
// refuses an empty or duplicate name and a receiver with no suitable
// method; unsuitable methods are skipped.
func (r *registry) register(name string, rcvr any) error {
	if name == "" {
		return errors.New("rpc: no service name given")
	}
	typ := reflect.TypeOf(rcvr)
	if typ == nil {
		return errors.New("rpc: nil receiver for service " + name)
	}
	svc := &service{rcvr: reflect.ValueOf(rcvr), methods: suitableMethods(typ)}
	if len(svc.methods) == 0 {
		if typ.Kind() != reflect.Pointer && len(suitableMethods(reflect.PointerTo(typ))) > 0 {
			return fmt.Errorf("rpc: type %s has no exported methods of suitable type (hint: pass a pointer to value of that type)", typ)
		}
		return fmt.Errorf("rpc: type %s has no exported methods of suitable type", typ)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.load()
	if _, dup := old[name]; dup {
		return errors.New("rpc: service already defined: " + name)
	}
	next := make(map[string]*service, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[name] = svc
	r.services.Store(&next)
	return nil
}

func (r *registry) load() map[string]*service {
	if m := r.services.Load(); m != nil {
		return *m
	}
	return nil
}

// lookup finds the method named by serviceMethod ("Service.Method"). The
// error texts are net/rpc's, which callers may already match on.
func (r *registry) lookup(serviceMethod string) (*service, *method, error) {
	dot := strings.LastIndex(serviceMethod, ".")
	if dot < 0 {
		return nil, nil, errors.New("rpc: service/method request ill-formed: " + serviceMethod)
	}
	svc := r.load()[serviceMethod[:dot]]
	if svc == nil {
		return nil, nil, fmt.Errorf("%w %s", ErrUnknownService, serviceMethod)
	}
	m := svc.methods[serviceMethod[dot+1:]]
	if m == nil {
		return nil, nil, fmt.Errorf("%w %s", ErrUnknownMethod, serviceMethod)
	}
	return svc, m, nil
}

// suitableMethods returns typ's methods that have the RPC shape.
func suitableMethods(typ reflect.Type) map[string]*method {
	methods := make(map[string]*method)
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		if !m.IsExported() {
			continue
		}
		mt := m.Type
		// Receiver, args, reply; one result, an error.
		if mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != typeOfError {
			continue
		}
		argType, replyType := mt.In(1), mt.In(2)
		if !exportedOrBuiltin(argType) {
			continue
		}
		if replyType.Kind() != reflect.Pointer || !exportedOrBuiltin(replyType) {
			continue
		}
		methods[m.Name] = &method{fn: m.Func, argType: argType, replyType: replyType}
	}
	return methods
}

// exportedOrBuiltin reports whether a peer could name t's (pointed-to)
// type: exported, or predeclared and so without a package.
func exportedOrBuiltin(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return token.IsExported(t.Name()) || t.PkgPath() == ""
}

// newArgs returns a fresh *A to decode the request body into.
func (m *method) newArgs() reflect.Value {
	if m.argType.Kind() == reflect.Pointer {
		return reflect.New(m.argType.Elem())
	}
	return reflect.New(m.argType)
}

// arg turns what newArgs returned into the value the method takes: the
// pointer itself when A is a pointer, else what it points to.
func (m *method) arg(argp reflect.Value) reflect.Value {
	if m.argType.Kind() == reflect.Pointer {
		return argp
	}
	return argp.Elem()
}

// newReply returns a fresh *R. Maps and slices start empty rather than nil,
// as net/rpc does, so a method can add to them without making them first.
func (m *method) newReply() reflect.Value {
	v := reflect.New(m.replyType.Elem())
	switch m.replyType.Elem().Kind() {
	case reflect.Map:
		v.Elem().Set(reflect.MakeMap(m.replyType.Elem()))
	case reflect.Slice:
		v.Elem().Set(reflect.MakeSlice(m.replyType.Elem(), 0, 0))
	}
	return v
}

// Methods lists every registered "Service.Method", sorted. Tests use it
// to hold every endpoint to a rule (every endpoint checks its caller, say)
// so that a new endpoint cannot be added without meeting it.
func (s *Server) Methods() []string {
	var out []string
	for name, svc := range s.services.load() {
		for m := range svc.methods {
			out = append(out, name+"."+m)
		}
	}
	sort.Strings(out)
	return out
}

// NewCallValues returns a fresh argument (a pointer, as the dispatcher
// decodes into) and reply for method, for a caller that knows the method
// only by name.
func (s *Server) NewCallValues(method string) (args, reply any, err error) {
	_, m, err := s.services.lookup(method)
	if err != nil {
		return nil, nil, err
	}
	return m.newArgs().Interface(), m.newReply().Interface(), nil
}
