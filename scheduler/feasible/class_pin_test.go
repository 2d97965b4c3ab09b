package feasible

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// The computed class is stored with every node and compared across
// servers and releases: a node whose attributes are the same must keep
// its class whatever the attributes are kept in. These figures were
// computed when attributes were a map[string]string.
func TestComputeClassIsTheSameAsWhenAttributesWereAMap(t *testing.T) {
	for _, tc := range []struct {
		name string
		node *structs.Node
		want string
	}{
		{
			name: "attributes and meta, with unique.* keys and an empty key and value",
			node: &structs.Node{
				Datacenter: "dc2", NodePool: "gpu", NodeClass: "large",
				Attributes: structs.NewAttributes(map[string]string{
					"kernel.name": "linux", "kernel.version": "6.1.0", "cpu.arch": "amd64",
					"cpu.numcores": "8", "driver.exec": "1", "nomad.version": "1.8.0",
					"unique.hostname": "web-1", "unique.network.ip-address": "10.0.0.1",
					"os.name": "debian", "": "empty-key", "z": "",
				}),
				Meta: map[string]string{"rack": "r7", "zone": "a", "unique.serial": "123"},
			},
			want: "v1:db27937ce71717e3",
		},
		{
			name: "no attributes and no meta",
			node: &structs.Node{Datacenter: "dc1"},
			want: "v1:b86d036b71bfde18",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ComputeClass(tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("ComputeClass = %s, want %s", got, tc.want)
			}
		})
	}
}
