package nomad

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/stream"
	"github.com/drover-sched/drover/structs"
)

// eventsOf applies the log to a fresh FSM with a broker and returns every
// frame a subscriber from index 0 receives.
func eventsOf(t *testing.T, l *fsmLog) []*stream.Frame {
	t.Helper()
	f := testFSM(t)
	b := stream.NewBroker(stream.Config{BufferEvents: 1 << 20})
	f.SetEventSink(b)
	l.applyTo(t, f)
	s, err := b.Subscribe(stream.SubscribeRequest{Namespace: stream.AllNamespaces})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []*stream.Frame
	for {
		fr, err := s.TryNext()
		if err != nil {
			t.Fatal(err)
		}
		if fr == nil {
			return out
		}
		out = append(out, fr)
	}
}

func describe(frames []*stream.Frame) []string {
	var out []string
	for _, f := range frames {
		for _, e := range f.Events {
			out = append(out, fmt.Sprintf("%d %s %s %s", e.Index, e.Topic, e.Type, e.Key))
		}
	}
	return out
}

// TestFSMEventsForEveryKindOfChange applies one entry of every message
// type and checks the whole stream: each change is one event, typed by
// its entry as Nomad types it, in index order; entries that change none of
// the topics' tables (ACLs, scheduler config, KV, GC of evals) make none.
func TestFSMEventsForEveryKindOfChange(t *testing.T) {
	frames := eventsOf(t, buildLog(t))
	want := []string{
		"1 Node NodeRegistration n1",
		"2 Node NodeRegistration n2",
		"3 Node NodeRegistration n3",
		"4 Job JobRegistered web",
		"4 Evaluation JobRegistered e1",
		"5 Job JobRegistered batchy",
		"5 Evaluation JobRegistered e2",
		"6 Deployment PlanResult d1",
		"6 Allocation PlanResult a1",
		"6 Allocation PlanResult a2",
		"7 Evaluation EvaluationUpdated e1",
		"7 Job EvaluationUpdated web", // the job's status follows its evals
		"8 Allocation AllocationUpdated a1",
		"9 Service ServiceRegistration _nomad-task-a1-t-web-http",
		"9 Service ServiceRegistration _nomad-task-a1-t-web-admin",
		"10 Service ServiceDeregistration _nomad-task-a1-t-web-admin",
		"11 Node NodeEvent n2",
		"11 Evaluation NodeEvent e3",
		"12 Node NodeDrain n3",
		"13 Node NodeDrain n3",
		"14 Node NodeEligibility n3",
		"15 Allocation AllocationUpdateDesiredStatus a1",
		"15 Evaluation AllocationUpdateDesiredStatus e4",
		"15 Job AllocationUpdateDesiredStatus web",
		"16 Allocation AllocationUpdateDesiredStatus a1",
		"16 Evaluation AllocationUpdateDesiredStatus e5",
		"17 Deployment PlanResult d2",
		"17 Allocation PlanResult a3",
		"18 Deployment DeploymentAllocHealth d2",
		"18 Allocation DeploymentAllocHealth a3",
		"19 Deployment DeploymentPromotion d2",
		"19 Allocation DeploymentPromotion a3",
		"20 Deployment DeploymentStatusUpdate d1",
		"24 Job JobRegistered web", // marked stable
		"26 Job JobRegistered encode",
		"27 Job JobRegistered encode/dispatch-1700000000-0a1b2c3d",
		"27 Evaluation JobRegistered e6",
		"36 Job JobDeregistered web",
		"37 Job JobBatchDeregistered batchy",
		"38 Node NodeDeregistration n3",
		"39 Node NodeDeregistration n2",
		"40 Node NodeRegistration n4",
		"41 Node NodeEvent n4",
	}
	got := describe(frames)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := 1; i < len(frames); i++ {
		if frames[i].Index <= frames[i-1].Index {
			t.Fatalf("frame %d has index %d after %d", i, frames[i].Index, frames[i-1].Index)
		}
	}
}

// TestFSMEventPayloadsAreNomadsShapes decodes the stream's JSON the way
// Nomad's Go client does and checks what each payload holds and leaves out.
func TestFSMEventPayloadsAreNomadsShapes(t *testing.T) {
	var lines []string
	for _, f := range eventsOf(t, buildLog(t)) {
		lines = append(lines, string(f.AppendJSON(nil)))
	}
	all := strings.Join(lines, "")
	if strings.Contains(all, "n1-secret") || strings.Contains(all, "SecretID") {
		t.Fatal("a node's secret is in the event stream")
	}
	var planFrame struct {
		Index  uint64
		Events []struct {
			Topic   string
			Payload map[string]map[string]any
		}
	}
	if err := json.Unmarshal([]byte(lines[5]), &planFrame); err != nil {
		t.Fatal(err)
	}
	for _, e := range planFrame.Events {
		if e.Topic != "Allocation" {
			continue
		}
		a := e.Payload["Allocation"]
		if a == nil || a["ID"] == nil {
			t.Fatalf("alloc event without its Allocation: %+v", e.Payload)
		}
		if a["Job"] != nil {
			t.Fatal("an alloc event carries its job; Nomad leaves it out")
		}
	}
	var dereg struct {
		Events []struct {
			Type       string
			FilterKeys []string
			Payload    struct{ Service structs.ServiceRegistration }
		}
	}
	for _, line := range lines {
		if strings.Contains(line, `"ServiceDeregistration"`) {
			if err := json.Unmarshal([]byte(line), &dereg); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(dereg.Events) != 1 || dereg.Events[0].Payload.Service.ID != "_nomad-task-a1-t-web-admin" ||
		dereg.Events[0].Payload.Service.ServiceName == "" || dereg.Events[0].FilterKeys[0] != dereg.Events[0].Payload.Service.ServiceName {
		t.Fatalf("service deregistration event %+v", dereg)
	}
	var purge struct {
		Events []struct {
			Payload struct {
				Job     map[string]any
				Deleted bool
			}
		}
	}
	var last string // the purge of batchy
	for _, l := range lines {
		if strings.Contains(l, `"Type":"JobBatchDeregistered"`) {
			last = l
		}
	}
	if err := json.Unmarshal([]byte(last), &purge); err != nil {
		t.Fatal(err)
	}
	if p := purge.Events[0].Payload; !p.Deleted || p.Job["ID"] != "batchy" {
		t.Fatalf("purge event payload %s", last)
	}
}

// TestFSMEventsAreDeterministic: two servers applying the same log
// publish byte-identical streams, since events come only from the entry.
func TestFSMEventsAreDeterministic(t *testing.T) {
	l := buildLog(t)
	a, b := eventsOf(t, l), eventsOf(t, l)
	if len(a) != len(b) {
		t.Fatalf("%d frames vs %d", len(a), len(b))
	}
	for i := range a {
		if x, y := a[i].AppendJSON(nil), b[i].AppendJSON(nil); !bytes.Equal(x, y) {
			t.Fatalf("frame %d differs:\n%s\n%s", i, x, y)
		}
	}
}

// TestFSMEventsResumeFromAnIndex: a subscriber asking for index 13 gets
// exactly the frames from 13 on.
func TestFSMEventsResumeFromAnIndex(t *testing.T) {
	l := buildLog(t)
	f := testFSM(t)
	b := stream.NewBroker(stream.Config{})
	f.SetEventSink(b)
	l.applyTo(t, f)
	s, err := b.Subscribe(stream.SubscribeRequest{Index: 13, Namespace: stream.AllNamespaces})
	if err != nil {
		t.Fatal(err)
	}
	var got []*stream.Frame
	for {
		fr, err := s.TryNext()
		if err != nil {
			t.Fatal(err)
		}
		if fr == nil {
			break
		}
		got = append(got, fr)
	}
	all := describe(eventsOf(t, l))
	var want []string
	for _, d := range all {
		var idx int
		fmt.Sscan(d, &idx)
		if idx >= 13 {
			want = append(want, d)
		}
	}
	if g := describe(got); strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed at 13:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// TestFSMClosesStreamsOfADeletedToken: the entry that deletes a token
// closes the subscriptions opened with it.
func TestFSMClosesStreamsOfADeletedToken(t *testing.T) {
	f := testFSM(t)
	b := stream.NewBroker(stream.Config{})
	f.SetEventSink(b)
	s1, _ := b.Subscribe(stream.SubscribeRequest{Token: "t1"})
	s2, _ := b.Subscribe(stream.SubscribeRequest{Token: "t2"})
	l := &fsmLog{t: t}
	addACLEntries(l, time.Unix(1700000000, 0))
	l.applyTo(t, f)
	if !errors.Is(s2.Err(), stream.ErrTokenDeleted) {
		t.Fatalf("stream of deleted token t2: %v", s2.Err())
	}
	if s1.Err() != nil {
		t.Fatalf("stream of live token t1 closed: %v", s1.Err())
	}
}

// TestFSMRestoreEndsStreams: a snapshot's changes are in no event, so a
// restore closes every stream rather than leave a silent gap.
func TestFSMRestoreEndsStreams(t *testing.T) {
	src := testFSM(t)
	buildLog(t).applyTo(t, src)
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	dst := testFSM(t)
	b := stream.NewBroker(stream.Config{})
	dst.SetEventSink(b)
	s, _ := b.Subscribe(stream.SubscribeRequest{})
	if err := dst.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(s.Err(), stream.ErrRestored) {
		t.Fatalf("stream after a restore: %v", s.Err())
	}
}
