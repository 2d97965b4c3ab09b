package network_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/network"
	"github.com/drover-sched/drover/client/network/nettest"
	"github.com/drover-sched/drover/structs"
)

// Mode cni/<name> attaches the alloc with the operator's conflist of that
// name from cni_config_dir, port mappings included; a name with no
// conflist is refused, naming the directory, and makes nothing.
func TestCNIModeRunsTheNamedConflist(t *testing.T) {
	base := nettest.NewManager(t, "drovt-cni", "10.251.23.0/24")
	dir := t.TempDir()
	conf := `{
  "cniVersion": "1.0.0",
  "name": "drovt-cnimode",
  "plugins": [
    {"type": "bridge", "bridge": "drovt-cni", "isGateway": true, "ipMasq": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.251.23.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}, "snat": true}
  ]
}`
	if err := os.WriteFile(filepath.Join(dir, "drovt-cnimode.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll("/var/lib/cni/networks/drovt-cnimode") }) // host-local's store
	cfg := base.Config()
	cfg.CNIConfigDir = dir
	m, err := network.NewManager(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := structs.GenerateUUID()
	port := nettest.FreePort(t)
	st := nettest.Setup(t, m, network.Request{AllocID: id, Mode: "cni/drovt-cnimode", Ports: []structs.AllocatedPortMapping{{Label: "p", Value: port, To: 8080}}})
	if !strings.HasPrefix(st.Address, "10.251.23.") {
		t.Fatalf("address %q, want one of the conflist's subnet", st.Address)
	}
	nettest.ListenIn(t, st.NetNSPath, 8080, "mynet")
	if got, err := nettest.Ask(fmt.Sprintf("127.0.0.1:%d", port)); err != nil || got != "mynet" {
		t.Fatalf("host port %d answered %q, %v", port, got, err)
	}

	other := structs.GenerateUUID()
	_, err = m.Setup(bg(), network.Request{AllocID: other, Mode: "cni/nosuch"})
	if err == nil || !strings.Contains(err.Error(), `no CNI network "nosuch" in cni_config_dir `+dir) {
		t.Fatalf("Setup of cni/nosuch: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.NetNSDir, other)); !os.IsNotExist(err) {
		t.Fatalf("a refused mode left a namespace: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir, other+".json")); !os.IsNotExist(err) {
		t.Fatalf("a refused mode left a record: %v", err)
	}
}
