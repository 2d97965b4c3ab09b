package fingerprint

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// The host recording pins what Fingerprint makes of the machine the tests
// run on, so a change to how fingerprinting is put together can be shown
// to produce the same node: record before the change, compare after.
//
//	go test -run TestFingerprintMatchesHostRecording ./client/fingerprint -fingerprint.record=/tmp/fp.json
//	go test -run TestFingerprintMatchesHostRecording ./client/fingerprint -fingerprint.compare=/tmp/fp.json
var (
	recordHost  = flag.String("fingerprint.record", "", "write this host's fingerprint to the file")
	compareHost = flag.String("fingerprint.compare", "", "compare this host's fingerprint with the file's")
)

// volatileAttrs change between two fingerprints of one machine (free disk
// space); the recording keeps them out of the comparison.
var volatileAttrs = []string{"unique.storage.bytesfree"}

// hostFingerprint fingerprints this machine with a fixed configuration:
// the data dir is fixed because its path is an attribute.
func hostFingerprint(t *testing.T) *structs.Node {
	t.Helper()
	cfg, drv := operatorSettings(filepath.Join(os.TempDir(), "drover-fingerprint-recording"))
	n, err := Fingerprint(cfg, drv)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range volatileAttrs {
		if _, ok := n.Attributes.Get(k); !ok {
			t.Fatalf("attribute %s missing", k)
		}
		n.Attributes = n.Attributes.With(k, "(volatile)")
	}
	n.NodeResources.Disk.DiskMB = -1 // free space, volatile too
	return n
}

func TestFingerprintMatchesHostRecording(t *testing.T) {
	if *recordHost == "" && *compareHost == "" {
		t.Skip("needs -fingerprint.record or -fingerprint.compare")
	}
	got := hostFingerprint(t)
	if *recordHost != "" {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*recordHost, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(*compareHost)
	if err != nil {
		t.Fatal(err)
	}
	var want structs.Node
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if want.Attributes.Len() == 0 {
		t.Fatalf("%s holds no attributes", *compareHost)
	}
	for _, k := range attrDiff(want.Attributes.Map(), got.Attributes.Map()) {
		t.Errorf("attribute %s: recorded %q, now %q", k, want.Attributes.Value(k), got.Attributes.Value(k))
	}
	// Everything else, through the JSON both sides went through.
	b, err = json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var now structs.Node
	if err := json.Unmarshal(b, &now); err != nil {
		t.Fatal(err)
	}
	want.Attributes, now.Attributes = structs.Attributes{}, structs.Attributes{}
	if !reflect.DeepEqual(want, now) {
		wb, _ := json.MarshalIndent(want, "", "  ")
		nb, _ := json.MarshalIndent(now, "", "  ")
		t.Fatalf("this host's node differs from the recording beyond its attributes:\nrecorded %s\nnow %s", wb, nb)
	}
}

// attrDiff returns the keys whose values differ, sorted.
func attrDiff(a, b map[string]string) []string {
	var keys []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
