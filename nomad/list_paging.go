package nomad

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Every answer that carries a list of objects is paged by size as well as
// by count, so that it always fits in one RPC message when it crosses the
// network: a follower forwarding to the leader, a client-only agent asking
// a server, a client fetching its allocations. A job may now hold 1 MB of
// meta (server.job_max_source_size), and every allocation embeds its job,
// so a few dozen objects could make an answer larger than the message
// limit, and the caller (a whole node, for Alloc.GetAllocs) would learn
// nothing at all.
//
// A page holds the objects, in the list's order, from the one QueryOptions.
// NextToken names (the first when empty), up to PerPage of them (all when
// 0) and up to listPageBudget bytes as encoded; QueryMeta.NextToken names
// the first object left for the next page, and is empty on the last. The
// order is that of a key each list defines (pageKey): the token is the key
// of the next object, so a page resumes correctly even when objects come
// and go between pages. Callers that need the whole list follow the tokens
// (the HTTP handlers, the client's alloc fetch).

// listPageBudget is the bytes of objects one page may carry: half the
// message limit, so the rest of the answer and any estimate's slack fit
// with room to spare.
const listPageBudget = rpcx.DefaultMaxMessageSize / 2

// maxListObject is the largest object a page can carry on its own: the
// message limit less room for the reply around it.
const maxListObject = rpcx.DefaultMaxMessageSize - 64<<10

// objectSlack is added to each object's measured size for the array
// framing and any field an estimate leaves out.
const objectSlack = 64

// pager pages one list of T.
type pager[T any] struct {
	// key orders the list and names the objects in tokens.
	key func(T) string
	// size is an object's encoded size in bytes.
	size func(T) (int, error)
	// name says which object is too large, for the error.
	name func(T) string
	// budget is listPageBudget unless a test sets it.
	budget int
}

// page sorts items by key and returns the page q asks for, setting
// m.NextToken. An object larger than maxListObject is an
// ErrAnswerTooLarge naming it: no page could carry it.
func (p pager[T]) page(q *structs.QueryOptions, m *structs.QueryMeta, items []T) ([]T, error) {
	type keyed struct {
		key  string
		item T
	}
	all := make([]keyed, len(items))
	for i, it := range items {
		all[i] = keyed{p.key(it), it}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].key < all[j].key })
	if q.NextToken != "" {
		all = all[sort.Search(len(all), func(i int) bool { return all[i].key >= q.NextToken }):]
	}
	budget := p.budget
	if budget <= 0 {
		budget = listPageBudget
	}
	m.NextToken = ""
	out := make([]T, 0, len(all))
	used := 0
	for i, k := range all {
		if q.PerPage > 0 && i == int(q.PerPage) {
			m.NextToken = k.key
			break
		}
		n, err := p.size(k.item)
		if err != nil {
			return nil, err
		}
		n += objectSlack
		if n > maxListObject {
			return nil, fmt.Errorf("%w: %s is %d bytes encoded, more than the %d bytes one RPC answer can carry",
				ErrAnswerTooLarge, p.name(k.item), n, maxListObject)
		}
		if i > 0 && used+n > budget {
			m.NextToken = k.key
			break
		}
		used += n
		out = append(out, k.item)
	}
	return out, nil
}

// encodedSize is v's size in the RPC encoding, counted without keeping
// the bytes.
func encodedSize(v any) (int, error) {
	var c byteCounter
	if err := codec.NewEncoder(&c, rpcx.MsgpackHandle).Encode(v); err != nil {
		return 0, fmt.Errorf("measuring %T: %w", v, err)
	}
	return int(c), nil
}

type byteCounter int

func (c *byteCounter) Write(p []byte) (int, error) {
	*c += byteCounter(len(p))
	return len(p), nil
}

// allocSizer measures allocations, each of which embeds its job: the
// job is measured once per page however many allocations share it.
type allocSizer struct {
	jobs map[*structs.Job]int
}

func newAllocSizer() *allocSizer { return &allocSizer{jobs: map[*structs.Job]int{}} }

func (s *allocSizer) size(a *structs.Allocation) (int, error) {
	if a.Job == nil {
		return encodedSize(a)
	}
	job, ok := s.jobs[a.Job]
	if !ok {
		n, err := encodedSize(a.Job)
		if err != nil {
			return 0, err
		}
		s.jobs[a.Job], job = n, n
	}
	bare := *a
	bare.Job = nil
	n, err := encodedSize(&bare)
	if err != nil {
		return 0, err
	}
	return n + job, nil
}

// allocPager pages full allocations in the order key gives.
func allocPager(key func(*structs.Allocation) string) pager[*structs.Allocation] {
	return pager[*structs.Allocation]{
		key:  key,
		size: newAllocSizer().size,
		name: func(a *structs.Allocation) string { return "allocation " + a.ID },
	}
}

// newestKey is the key of lists shown newest first (evaluations,
// allocations, deployments): the create index descending, then the ID.
func newestKey(createIndex uint64, id string) string {
	return fmt.Sprintf("%016x", ^createIndex) + id
}

// byID is the key of lists ordered by ID.
func byID(id string) string { return id }

// jobKey orders jobs by ID, then namespace: IDs hold no spaces, so the
// key is unique across namespaces.
func jobKey(id, namespace string) string { return id + " " + namespace }

// The pagers of the lists that are not allocations (eval_endpoint.go has
// evalPager and stubPager).
var (
	jobStubPager = pager[*structs.JobListStub]{
		key:  func(j *structs.JobListStub) string { return jobKey(j.ID, j.Namespace) },
		size: sized[*structs.JobListStub],
		name: func(j *structs.JobListStub) string { return "job " + j.ID },
	}
	jobVersionPager = pager[*structs.Job]{
		key:  func(j *structs.Job) string { return fmt.Sprintf("%016x", ^j.Version) },
		size: sized[*structs.Job],
		name: func(j *structs.Job) string { return fmt.Sprintf("job %s version %d", j.ID, j.Version) },
	}
	deploymentPager = pager[*structs.Deployment]{
		key:  func(d *structs.Deployment) string { return newestKey(d.CreateIndex, d.ID) },
		size: sized[*structs.Deployment],
		name: func(d *structs.Deployment) string { return "deployment " + d.ID },
	}
	nodeStubPager = pager[*structs.NodeListStub]{
		key:  func(n *structs.NodeListStub) string { return byID(n.ID) },
		size: sized[*structs.NodeListStub],
		name: func(n *structs.NodeListStub) string { return "node " + n.ID },
	}
)

func allocKey(a *structs.Allocation) string { return byID(a.ID) }

// sized is a pager's size function for objects measured as they are.
func sized[T any](v T) (int, error) { return encodedSize(v) }
