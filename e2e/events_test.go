//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// Every server produces the event stream from the raft entries it applies,
// so three server processes (leader and followers) stream the same events
// in the same order, Nomad's Go client reads each, and `drover operator
// api` follows the stream through a client-only agent, which relays it.
func TestEventStreamIsTheSameOnEveryServer(t *testing.T) {
	names := []string{"s1", "s2", "s3"}
	rpcPorts := []int{freePort(t), freePort(t), freePort(t)}
	var servers []*agent
	var all []string
	for _, p := range rpcPorts {
		all = append(all, fmt.Sprintf(`"127.0.0.1:%d"`, p))
	}
	for i, name := range names {
		extra := fmt.Sprintf(`
server {
  enabled          = true
  bootstrap_expect = 3
  server_join {
    retry_join     = [%s]
    retry_interval = "200ms"
  }
}`, strings.Join(all, ", "))
		servers = append(servers, newAgentWithRPCPort(t, agentSpec{name: name, extra: extra}, rpcPorts[i]))
	}
	waitForAgreedLeader(t, servers, 60*time.Second, "")
	client := newAgent(t, agentSpec{name: "c1", extra: fmt.Sprintf(`
client {
  enabled = true
  servers = [%s]
}`, strings.Join(all, ", "))})
	waitForReadyNodes(t, client, "c1")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	streams := make([]<-chan *nomadapi.Events, len(servers))
	for i, s := range servers {
		nc, err := nomadapi.NewClient(&nomadapi.Config{Address: s.httpAddr()})
		if err != nil {
			t.Fatal(err)
		}
		ch, err := nc.EventStream().Stream(ctx, map[nomadapi.Topic][]string{
			nomadapi.TopicJob: {}, nomadapi.TopicEvaluation: {}, nomadapi.TopicNode: {},
		}, 0, nil)
		if err != nil {
			t.Fatalf("stream of %s: %v", s.name, err)
		}
		streams[i] = ch
	}

	// operator api through the client-only agent, as a user runs it.
	cmd := exec.CommandContext(ctx, binary(t), "operator", "api", "/v1/event/stream?topic=Job")
	cmd.Env = append(os.Environ(), "DROVER_ADDR="+client.httpAddr())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	cliJobs := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			for _, id := range []string{"ev-0", "ev-1", "ev-2"} {
				if strings.Contains(sc.Text(), `"Type":"JobRegistered","Key":"`+id+`"`) {
					cliJobs <- id
				}
			}
		}
	}()

	// The jobs go in through the client agent, which forwards them.
	jobs := []string{"ev-0", "ev-1", "ev-2"}
	for _, id := range jobs {
		job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
		job.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(
			nomadapi.NewTask("t", "raw_exec").SetConfig("command", "/bin/sleep").SetConfig("args", []string{"300"}).
				Require(&nomadapi.Resources{CPU: intp(50), MemoryMB: intp(32)})))
		nc, _ := nomadapi.NewClient(&nomadapi.Config{Address: client.httpAddr()})
		if _, _, err := nc.Jobs().Register(job, nil); err != nil {
			t.Fatalf("registering %s: %v", id, err)
		}
	}

	// Each server's stream up to the last job's registration.
	seqs := make([][]string, len(servers))
	for i, ch := range streams {
		seen := map[string]bool{}
		for !seen["ev-0"] || !seen["ev-1"] || !seen["ev-2"] {
			select {
			case evs, ok := <-ch:
				if !ok || evs.Err != nil {
					t.Fatalf("stream of %s ended: %v", servers[i].name, evs)
				}
				for _, e := range evs.Events {
					if e.Index != evs.Index {
						t.Fatalf("%s: event of index %d in frame %d", servers[i].name, e.Index, evs.Index)
					}
					seqs[i] = append(seqs[i], fmt.Sprintf("%d %s %s %s", e.Index, e.Topic, e.Type, e.Key))
					if e.Topic == nomadapi.TopicJob && e.Type == "JobRegistered" {
						seen[e.Key] = true
					}
				}
			case <-ctx.Done():
				t.Fatalf("stream of %s: not every job registered within the deadline; got:\n%s", servers[i].name, strings.Join(seqs[i], "\n"))
			}
		}
	}
	// The streams may have read past the last registration by different
	// amounts; up to the shortest, they are the same.
	n := min(len(seqs[0]), len(seqs[1]), len(seqs[2]))
	t.Logf("%d events are the same on the three servers", n)
	for i := 1; i < len(seqs); i++ {
		if strings.Join(seqs[i][:n], "\n") != strings.Join(seqs[0][:n], "\n") {
			t.Fatalf("%s and %s streamed different events:\n%s\n---\n%s", servers[0].name, servers[i].name,
				strings.Join(seqs[0][:n], "\n"), strings.Join(seqs[i][:n], "\n"))
		}
	}
	var sawNode bool
	for _, line := range seqs[0] {
		sawNode = sawNode || strings.Contains(line, " Node NodeRegistration ")
	}
	if !sawNode {
		t.Fatalf("the client's registration is not in the stream:\n%s", strings.Join(seqs[0], "\n"))
	}

	got := map[string]bool{}
	for len(got) < len(jobs) {
		select {
		case id := <-cliJobs:
			got[id] = true
		case <-ctx.Done():
			t.Fatalf("drover operator api through the client agent showed only %v", got)
		}
	}
}

func intp(i int) *int { return &i }
