package raftlog

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/entries.golden")

// goldenEntriesPath records the bytes of one raft entry of each message
// type. Entries are on disk for good: a change to how any of them encodes
// must be a decision, not a side effect of a refactor.
var goldenEntriesPath = filepath.Join("testdata", "entries.golden")

// goldenRequests is the request each message type's entry carries.
func goldenRequests() map[structs.MessageType]any {
	return map[structs.MessageType]any{
		structs.NodeRegisterRequestType:                 &structs.NodeRegisterRequest{},
		structs.NodeDeregisterRequestType:               &structs.NodeDeregisterRequest{},
		structs.NodeUpdateStatusRequestType:             &structs.NodeUpdateStatusRequest{},
		structs.NodeUpdateDrainRequestType:              &structs.NodeUpdateDrainRequest{},
		structs.NodeUpdateEligibilityRequestType:        &structs.NodeUpdateEligibilityRequest{},
		structs.JobRegisterRequestType:                  &structs.JobRegisterRequest{},
		structs.JobDeregisterRequestType:                &structs.JobDeregisterRequest{},
		structs.EvalUpdateRequestType:                   &structs.EvalUpdateRequest{},
		structs.EvalDeleteRequestType:                   &structs.EvalDeleteRequest{},
		structs.AllocClientUpdateRequestType:            &structs.AllocUpdateRequest{},
		structs.ApplyPlanResultsRequestType:             &structs.ApplyPlanResultsRequest{},
		structs.AllocUpdateDesiredTransitionRequestType: &structs.AllocUpdateDesiredTransitionRequest{},
		structs.DeploymentStatusUpdateRequestType:       &structs.DeploymentStatusUpdateRequest{},
		structs.DeploymentDeleteRequestType:             &structs.DeploymentDeleteRequest{},
		structs.SchedulerConfigRequestType:              &structs.SchedulerSetConfigRequest{},
		structs.JobStabilityRequestType:                 &structs.JobStabilityRequest{},
		structs.JobBatchDeregisterRequestType:           &structs.JobBatchDeregisterRequest{},
		structs.NodeBatchDeregisterRequestType:          &structs.NodeBatchDeregisterRequest{},
		structs.AllocStopRequestType:                    &structs.AllocStopRequest{},
		structs.GenericWriteRequestType:                 &structs.GenericWriteRequest{},
		structs.JobScaleRequestType:                     &structs.JobScaleApplyRequest{},
		structs.JobDispatchRequestType:                  &structs.JobDispatchApplyRequest{},
		structs.ACLPolicyUpsertRequestType:              &structs.ACLPolicyUpsertRequest{},
		structs.ACLPolicyDeleteRequestType:              &structs.ACLPolicyDeleteRequest{},
		structs.ACLTokenUpsertRequestType:               &structs.ACLTokenUpsertRequest{},
		structs.ACLTokenDeleteRequestType:               &structs.ACLTokenDeleteRequest{},
		structs.ACLTokenBootstrapRequestType:            &structs.ACLTokenBootstrapApplyRequest{},
		structs.ServerSecretRequestType:                 &structs.ServerSecretRequest{},
		structs.DeploymentPromoteRequestType:            &structs.DeploymentPromoteRequest{},
		structs.DeploymentAllocHealthRequestType:        &structs.ApplyDeploymentAllocHealthRequest{},
		structs.ServiceRegistrationUpsertRequestType:    &structs.ServiceRegistrationUpsertRequest{},
		structs.ServiceRegistrationDeleteRequestType:    &structs.ServiceRegistrationDeleteRequest{},
		structs.NodeBatchUpdateStatusRequestType:        &structs.NodeBatchUpdateStatusRequest{},
	}
}

// fillGolden sets every exported field reachable from v to a value derived
// from its name, so the golden bytes cover every field of every nested
// struct, not just a request's top level. Maps get one entry (map order
// would make more than one nondeterministic); a struct type already being
// filled further up is left zero, which ends cycles.
func fillGolden(v reflect.Value, name string, path map[reflect.Type]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if path[v.Type().Elem()] {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fillGolden(v.Elem(), name, path)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("golden", 3600))))
			return
		}
		if path[v.Type()] {
			return
		}
		path[v.Type()] = true
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() {
				fillGolden(v.Field(i), f.Name, path)
			}
		}
		delete(path, v.Type())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(name))
			return
		}
		if k := v.Type().Elem(); (k.Kind() == reflect.Pointer && path[k.Elem()]) || path[k] {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillGolden(s.Index(0), name, path)
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fillGolden(v.Index(i), name, path)
		}
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k := reflect.New(v.Type().Key()).Elem()
		fillGolden(k, name+"Key", path)
		e := reflect.New(v.Type().Elem()).Elem()
		fillGolden(e, name, path)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString(name)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(len(name)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(len(name)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(len(name)) + 0.5)
	}
}

// goldenEntries encodes one filled request of each message type, in type
// order, one "Name hex" line each.
func goldenEntries(t *testing.T, encode func(structs.MessageType, any) ([]byte, error)) []byte {
	t.Helper()
	reqs := goldenRequests()
	var out bytes.Buffer
	for _, mt := range structs.AllMessageTypes() {
		req, ok := reqs[mt]
		if !ok {
			t.Fatalf("message type %s has no golden request: add one and run with -update-golden", mt)
		}
		fillGolden(reflect.ValueOf(req).Elem(), "", map[reflect.Type]bool{})
		buf, err := encode(mt, req)
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		fmt.Fprintf(&out, "%s %s\n", mt, hex.EncodeToString(buf))
	}
	if len(reqs) != len(structs.AllMessageTypes()) {
		t.Fatalf("%d golden requests for %d message types", len(reqs), len(structs.AllMessageTypes()))
	}
	return out.Bytes()
}

// The bytes of every message type's entry are what they were when the
// golden file was written; and each decodes back to the request it was
// made from.
func TestRaftEntryGoldenBytes(t *testing.T) {
	got := goldenEntries(t, Encode)
	if *updateGolden {
		if err := os.WriteFile(goldenEntriesPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenEntriesPath)
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(string(want), "\n")
	for i, line := range strings.Split(string(got), "\n") {
		if i >= len(wantLines) || line != wantLines[i] {
			name, _, _ := strings.Cut(line, " ")
			t.Errorf("the %s entry's bytes changed (line %d of %s)", name, i+1, goldenEntriesPath)
		}
	}
	if len(wantLines) != len(strings.Split(string(got), "\n")) {
		t.Errorf("%s has %d lines, the entries make %d", goldenEntriesPath, len(wantLines), len(strings.Split(string(got), "\n")))
	}

	reqs := goldenRequests()
	sc := bufio.NewScanner(bytes.NewReader(want))
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		mt := structs.AllMessageTypes()[i]
		name, hexed, _ := strings.Cut(sc.Text(), " ")
		if name != mt.String() {
			t.Fatalf("line %d is %s, want %s", i+1, name, mt)
		}
		buf, err := hex.DecodeString(hexed)
		if err != nil {
			t.Fatal(err)
		}
		got, ignore, body, ok := Split(buf)
		if !ok || got != mt || ignore {
			t.Fatalf("%s entry splits as type %s (ignore unknown %v, ok %v)", mt, got, ignore, ok)
		}
		out := reflect.New(reflect.TypeOf(reqs[mt]).Elem()).Interface()
		if err := Decode(body, out); err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		again, err := Encode(mt, out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, buf) {
			t.Errorf("%s: the entry decoded and encoded again differs from the golden bytes", mt)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
