package network_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/structs"
)

// Two allocs of one group on one node both listen on 8080 in their own
// namespaces; each answers on its own host port, static and dynamic,
// from the host's loopback and its address alike, and teardown leaves
// the host as it was.
func TestTwoAllocsListenOnOnePortEachOnItsOwnHostPort(t *testing.T) {
	m := nettest.NewManager(t, "drovt-two", "10.251.16.0/24")
	// The first alloc ever on a bridge creates it and the plugins' shared
	// chains, which stay (as in Nomad): what is compared is the host
	// between allocs.
	warm := structs.GenerateUUID()
	if _, err := m.Setup(bg(), network.Request{AllocID: warm, Mode: network.ModeBridge}); err != nil {
		t.Fatal(err)
	}
	if err := m.Teardown(bg(), warm); err != nil {
		t.Fatal(err)
	}
	before := nettest.HostState(t, m)

	ports := []int{nettest.FreePort(t), nettest.FreePort(t)}
	ids := []string{structs.GenerateUUID(), structs.GenerateUUID()}
	for i, id := range ids {
		st, err := m.Setup(bg(), network.Request{AllocID: id, Mode: network.ModeBridge, Ports: []structs.AllocatedPortMapping{
			{Label: "http", Value: ports[i], To: 8080, HostIP: "127.0.0.1"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Teardown(bg(), id) })
		if !strings.HasPrefix(st.Address, "10.251.16.") {
			t.Fatalf("alloc %d got address %q, want one in 10.251.16.0/24", i, st.Address)
		}
		nettest.ListenIn(t, st.NetNSPath, 8080, fmt.Sprintf("alloc-%d", i))
	}
	for i := range ids {
		got, err := nettest.Ask(fmt.Sprintf("127.0.0.1:%d", ports[i]))
		if err != nil || got != fmt.Sprintf("alloc-%d", i) {
			t.Fatalf("host port %d answered %q, %v; want alloc-%d", ports[i], got, err, i)
		}
	}
	if during := nettest.HostState(t, m); during == before {
		t.Fatalf("two attached allocs left no trace in the compared host state:\n%s", during)
	}
	for _, id := range ids {
		if err := m.Teardown(bg(), id); err != nil {
			t.Fatal(err)
		}
	}
	if after := nettest.HostState(t, m); after != before {
		t.Fatalf("teardown left the host changed\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for i := range ids {
		if _, err := nettest.Ask(fmt.Sprintf("127.0.0.1:%d", ports[i])); err == nil {
			t.Fatalf("host port %d still answers after teardown", ports[i])
		}
	}
}

// Mode none is a namespace of its own with only loopback in it.
func TestModeNoneHasOnlyLoopback(t *testing.T) {
	m := nettest.NewManager(t, "drovt-none", "10.251.17.0/24")
	id := structs.GenerateUUID()
	st, err := m.Setup(bg(), network.Request{AllocID: id, Mode: network.ModeNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Teardown(bg(), id) })
	out := nettest.InNS(t, st.NetNSPath, "ip", "-o", "link")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "lo:") || !strings.Contains(lines[0], "UP") {
		t.Fatalf("links in a mode none namespace:\n%s\nwant lo alone, up", out)
	}
	if err := m.Teardown(bg(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.NetNSPath); !os.IsNotExist(err) {
		t.Fatalf("namespace %s still there after teardown: %v", st.NetNSPath, err)
	}
}

// The dns block becomes the namespace's resolv.conf.
func TestDNSBlockWritesResolvConf(t *testing.T) {
	m := nettest.NewManager(t, "drovt-dns", "10.251.18.0/24")
	id := structs.GenerateUUID()
	st, err := m.Setup(bg(), network.Request{AllocID: id, Mode: network.ModeBridge, DNS: &structs.DNSConfig{
		Servers: []string{"10.0.0.53", "10.0.0.54"}, Searches: []string{"svc.local"}, Options: []string{"ndots:2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(st.ResolvConf)
	if err != nil {
		t.Fatal(err)
	}
	want := "nameserver 10.0.0.53\nnameserver 10.0.0.54\nsearch svc.local\noptions ndots:2\n"
	if string(b) != want {
		t.Fatalf("resolv.conf:\n%s\nwant:\n%s", b, want)
	}
	if err := m.Teardown(bg(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.ResolvConf); !os.IsNotExist(err) {
		t.Fatalf("resolv.conf still there after teardown: %v", err)
	}
}

// A client restarted after a crash tears down the allocs that are gone
// and re-attaches to the one that still runs, leaving its port mapped.
func TestReconcileTearsDownOnlyWhatIsGone(t *testing.T) {
	m := nettest.NewManager(t, "drovt-rec", "10.251.19.0/24")
	kept, gone := structs.GenerateUUID(), structs.GenerateUUID()
	keptPort, gonePort := nettest.FreePort(t), nettest.FreePort(t)
	for _, a := range []struct {
		id   string
		port int
	}{{kept, keptPort}, {gone, gonePort}} {
		st, err := m.Setup(bg(), network.Request{AllocID: a.id, Mode: network.ModeBridge, Ports: []structs.AllocatedPortMapping{{Label: "p", Value: a.port, To: 8080}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Teardown(bg(), a.id) })
		nettest.ListenIn(t, st.NetNSPath, 8080, a.id)
	}
	// A new Manager on the same state is the restarted client.
	m2, err := network.NewManager(m.Config(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m2.Reconcile(bg(), func(id string) bool { return id == kept }); err != nil {
		t.Fatal(err)
	}
	st, err := m2.Restore(kept)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := nettest.Ask(fmt.Sprintf("127.0.0.1:%d", keptPort)); err != nil || got != kept {
		t.Fatalf("the kept alloc answered %q, %v after the restart", got, err)
	}
	if _, err := m2.Restore(gone); err == nil {
		t.Fatal("the gone alloc's network can still be restored")
	}
	if _, err := os.Stat(st.NetNSPath); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Config().NetNSDir + "/" + gone); !os.IsNotExist(err) {
		t.Fatalf("the gone alloc's namespace is still there: %v", err)
	}
	if _, err := nettest.Ask(fmt.Sprintf("127.0.0.1:%d", gonePort)); err == nil {
		t.Fatal("the gone alloc's port is still mapped")
	}
}

func bg() context.Context { return context.Background() }
