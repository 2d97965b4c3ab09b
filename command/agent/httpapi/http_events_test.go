package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/nomad/stream"
)

// streamTimeout bounds each wait for a stream's frames: the machine is
// shared and slow, so it is generous; a passing test never waits it out.
const streamTimeout = 60 * time.Second

func TestEventStreamRefusesBadParameters(t *testing.T) {
	srv := fakeAPI(t, fakeRPC{}, nil)
	for _, tc := range []struct{ query, want string }{
		{"topic=Jobs", `invalid topic "Jobs": the topic must be one of Job, Allocation, Evaluation, Node, Deployment, Service or *`},
		{"topic=Job:", `the key after ':' is empty`},
		{"index=-1", `invalid index "-1"`},
		{"topic=" + strings.Repeat("&topic=Job", maxEventTopics), "too many topic parameters"},
	} {
		resp, body := call(t, http.MethodGet, srv.URL+"/v1/event/stream?"+tc.query, nil)
		requireStatus(t, resp, body, http.StatusBadRequest, tc.want)
	}
}

// TestEventStreamHeartbeats: an idle stream sends {} at the interval.
func TestEventStreamHeartbeats(t *testing.T) {
	b := stream.NewBroker(stream.Config{})
	api := &httpAPI{logger: hclog.NewNullLogger()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := b.Subscribe(stream.SubscribeRequest{})
		if err != nil {
			t.Error(err)
			return
		}
		defer sub.Close()
		api.serveEvents(w, r, sub, 20*time.Millisecond)
	}))
	defer srv.Close()
	_, lines := openStream(t, srv.URL, "")
	for i := 0; i < 3; i++ {
		select {
		case line := <-lines:
			if line != "{}" {
				t.Fatalf("line %d of an idle stream is %q, want {}", i, line)
			}
		case <-time.After(streamTimeout):
			t.Fatal("no heartbeat")
		}
	}
	b.Shutdown()
	for line := range lines {
		if strings.HasPrefix(line, `{"Error"`) {
			if !strings.Contains(line, "shutting down") {
				t.Fatalf("close frame %q", line)
			}
			return
		}
	}
	t.Fatal("the stream ended without saying why")
}
