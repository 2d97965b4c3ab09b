//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The web UI in a real browser: headless Chromium, driven through the
// DevTools protocol by chromedp, against a real agent process. The test
// goes where a user would: the jobs page, a job appearing on it without a
// reload, the job, its allocation and the line its task logged, then a
// client drained from its page. Every page is saved as a screenshot.

// uiJob is a raw_exec job whose task logs uiLogLine and then waits.
const uiLogLine = "hello from the drover web UI test"

func uiJob(id, meta string, memoryMB int) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type        = "service"
  meta {
    owner = %q
  }
  group "web" {
    task "hello" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo '%s'; exec sleep 3600"]
      }
      resources {
        cpu    = 50
        memory = %d
      }
    }
  }
}
`, id, meta, uiLogLine, memoryMB)
}

// findBrowser returns a Chromium (or Chrome) to drive: $DROVER_BROWSER,
// else the first of the usual names on $PATH.
func findBrowser() (string, error) {
	if b := os.Getenv("DROVER_BROWSER"); b != "" {
		return b, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no chromium, chromium-browser or google-chrome on PATH and DROVER_BROWSER is unset")
}

// artifactsDir is where screenshots go: $DROVER_E2E_ARTIFACTS/<test> when
// set (kept after the run, for CI to collect), else the test's temp dir.
func artifactsDir(t *testing.T) string {
	dir := t.TempDir()
	if root := os.Getenv("DROVER_E2E_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, t.Name())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless tab and what it has complained about.
type browser struct {
	t    *testing.T
	ctx  context.Context
	dir  string
	mu   sync.Mutex
	errs []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe, err := findBrowser()
	if err != nil {
		t.Skipf("skipping the browser test: %v (install Debian's chromium package, as .ci/run does)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		// The sandbox needs user namespaces, which CI containers (and
		// root) do not have; the pages are our own.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx, dir: artifactsDir(t)}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Listen starts the browser, bound to ctx, which has no deadline;
	// every action runs under a deadline of its own (see run).
	err = chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				msg = "console.error:"
				for _, a := range e.Args {
					msg += fmt.Sprintf(" %s%s", a.Value, a.Description)
				}
			}
		case *log.EventEntryAdded:
			// Failed requests are the pages' business (they show them);
			// anything else logged as an error (a CSP violation, a module
			// that did not load) is a bug.
			if e.Entry.Level == log.EntryLevelError && e.Entry.Source != log.EntrySourceNetwork {
				msg = fmt.Sprintf("%s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL)
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errs = append(b.errs, msg)
			b.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	t.Logf("browser %s; screenshots in %s", exe, b.dir)
	return b
}

// run runs actions with a deadline.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage: %s", what, err, b.pageText())
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// pageText is what the page says, for failure messages.
func (b *browser) pageText() string {
	s, err := eval[string](b, `location.pathname + "\n" + document.body.innerText`)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	if len(s) > 3000 {
		s = s[:3000] + "…"
	}
	return s
}

// waitUntil waits until the JavaScript expression cond is true in the
// page, which updates itself: nothing here reloads it.
func (b *browser) waitUntil(what, cond string, timeout time.Duration) {
	b.t.Helper()
	waitFor(b.t, timeout, func() (bool, string) {
		ok, err := eval[bool](b, `Boolean(`+cond+`)`)
		if err != nil {
			return false, err.Error()
		}
		return ok, what + "; the page says:\n" + b.pageText()
	})
}

// screenshot saves the whole page as name.png in the artifacts dir.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}

func (b *browser) checkNoErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errs {
		b.t.Errorf("the browser reported: %s", e)
	}
}

func TestWebUIInABrowser(t *testing.T) {
	b := newBrowser(t)
	a := newAgent(t, agentSpec{name: "ui", extra: singleMachine})
	nodeID := a.waitOneReadyNode(t)

	// The agent's root sends the browser to the jobs page.
	b.run("open the agent", chromedp.Navigate(a.httpAddr()+"/"))
	b.waitUntil("the empty jobs list", `location.pathname === "/ui/jobs" && document.querySelector("#jobs-list")?.innerText.includes("No jobs yet")`, 30*time.Second)
	b.screenshot("01-jobs-empty")

	// A job run through the API appears on the open page: the marker set
	// in the page survives, so the page was never reloaded.
	if _, err := eval[string](b, `window.droverTestMarker = "still the same page"`); err != nil {
		t.Fatal(err)
	}
	registerJob(t, a, uiJob("uiweb", "first", 32), 30*time.Second)
	stopAtCleanup(t, a, "uiweb")
	b.waitUntil("the job in the list", `document.querySelector('a.job-link[data-job="uiweb"]')`, 60*time.Second)
	if marker, err := eval[string](b, `window.droverTestMarker || ""`); err != nil || marker != "still the same page" {
		t.Fatalf("the page was reloaded to show the job (marker %q, %v)", marker, err)
	}
	b.waitUntil("the job running", `document.querySelector("#jobs-list")?.innerText.includes("1 running")`, 60*time.Second)
	b.screenshot("02-jobs")

	// The job's page, reached by its link, lists its allocation.
	b.run("open the job", chromedp.Click(chromedp.CSS(`a.job-link[data-job="uiweb"]`)))
	b.waitUntil("the job's allocation", `location.pathname === "/ui/jobs/uiweb@default" && document.querySelector('#job-allocations-table a[href^="/ui/allocations/"]')`, 60*time.Second)
	b.waitUntil("the job's groups and versions", `document.querySelector("#job-groups")?.innerText.includes("hello (raw_exec)") && document.querySelector("#job-versions")?.innerText.includes("Version 0")`, 30*time.Second)
	b.screenshot("03-job")

	// Its allocation shows the line the task logged.
	b.run("open the allocation", chromedp.Click(chromedp.CSS(`#job-allocations-table a[href^="/ui/allocations/"]`)))
	b.waitUntil("the task's log line", `document.querySelector("#log-output")?.textContent.includes(`+jsString(uiLogLine)+`)`, 60*time.Second)
	b.waitUntil("the task running", `document.querySelector("#alloc-tasks")?.innerText.includes("running")`, 30*time.Second)
	b.waitUntil("the task's resource use", `document.querySelector("#alloc-usage")?.innerText.includes("of 32.0 MiB")`, 60*time.Second)
	allocPath, err := eval[string](b, `location.pathname`)
	if err != nil {
		t.Fatal(err)
	}
	b.screenshot("04-allocation")

	// Back on the job's page, a new version appears with what changed.
	b.run("back to the job", chromedp.Click(chromedp.CSS(`.crumbs a[href="/ui/jobs/uiweb@default"]`)))
	b.waitUntil("the job's page", `document.querySelector("#job-versions")?.innerText.includes("Version 0")`, 30*time.Second)
	registerJob(t, a, uiJob("uiweb", "second", 32), 30*time.Second)
	b.waitUntil("version 1 and its diff", `document.querySelector("#job-versions")?.innerText.includes("Version 1") && `+
		`document.querySelector("#job-versions .diff")?.innerText.includes('"first" => "second"')`, 60*time.Second)
	b.screenshot("05-job-versions")

	// A job that cannot fit says why, in words.
	registerJob(t, a, uiJob("uibig", "big", 10_000_000), 30*time.Second)
	b.run("open the jobs", chromedp.Click(chromedp.CSS(`nav a[href="/ui/jobs"]`)))
	b.run("open the job that does not fit", chromedp.Click(chromedp.CSS(`a.job-link[data-job="uibig"]`)))
	b.waitUntil("the placement failure", `document.querySelector("#job-failures")?.innerText.includes('Task group "web": 1 allocation could not be placed') && `+
		`document.querySelector("#job-failures")?.innerText.includes("memory")`, 60*time.Second)
	b.screenshot("06-job-placement-failure")

	// The client's page drains the client: the servers record the drain,
	// and the page shows it without a reload.
	b.run("open the clients", chromedp.Click(chromedp.CSS(`nav a[href="/ui/clients"]`)))
	b.waitUntil("the client in the list", `document.querySelector("#clients-list a[href='/ui/clients/`+nodeID+`']")`, 30*time.Second)
	b.screenshot("07-clients")
	b.run("open the client", chromedp.Click(chromedp.CSS(`#clients-list a[href='/ui/clients/`+nodeID+`']`)))
	b.waitUntil("the drain control", `document.querySelector("#drain-button") && document.querySelector("#node-drain")?.innerText === "not draining"`, 30*time.Second)
	b.run("drain the client",
		chromedp.SetValue(chromedp.CSS(`#drain-deadline`), "30m"),
		chromedp.Click(chromedp.CSS(`#drain-button`)))
	// The drain has the deadline typed in. The drainer may finish it at
	// once (the one allocation stops and has nowhere to go), so a drain
	// that already completed counts too. (The servers do not keep the
	// drain request's Meta in LastDrain yet, so the page's message cannot
	// be checked.)
	waitFor(t, 30*time.Second, func() (bool, string) {
		n, _, err := a.api().Nodes().Info(nodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		if n.SchedulingEligibility != "ineligible" || n.LastDrain == nil {
			return false, fmt.Sprintf("node drain %+v last %+v eligibility %s; page: %s", n.DrainStrategy, n.LastDrain, n.SchedulingEligibility, b.pageText())
		}
		if n.DrainStrategy != nil && n.DrainStrategy.Deadline != 30*time.Minute {
			return false, fmt.Sprintf("drain deadline %s, want the 30m typed in the page", n.DrainStrategy.Deadline)
		}
		return true, ""
	})
	b.waitUntil("the page showing the drain", `document.querySelector("#node-eligibility")?.innerText === "ineligible" && `+
		`(document.querySelector("#node-drain")?.innerText.startsWith("draining (deadline 30m") || `+
		`document.querySelector("#node-last-drain")?.innerText.startsWith("complete"))`, 30*time.Second)
	b.screenshot("08-client-drained")

	// Ending the drain (or, if the drainer already ended it, marking the
	// node eligible) from the page makes the node schedulable again.
	stopVisible, err := eval[bool](b, `!document.querySelector("#drain-stop-button").hidden`)
	if err != nil {
		t.Fatal(err)
	}
	if stopVisible {
		b.run("stop the drain", chromedp.Click(chromedp.CSS(`#drain-stop-button`)))
	} else {
		b.run("mark the node eligible", chromedp.Click(chromedp.CSS(`#eligibility-button`)))
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		n, _, err := a.api().Nodes().Info(nodeID, nil)
		if err != nil {
			return false, err.Error()
		}
		return n.DrainStrategy == nil && n.SchedulingEligibility == "eligible",
			fmt.Sprintf("node drain %+v eligibility %s", n.DrainStrategy, n.SchedulingEligibility)
	})
	b.waitUntil("the page showing the node eligible", `document.querySelector("#node-eligibility")?.innerText === "eligible" && `+
		`document.querySelector("#node-drain")?.innerText === "not draining" && document.querySelector("#eligibility-button")?.innerText === "Mark ineligible"`, 30*time.Second)

	// The servers and evaluations pages.
	b.run("open the servers", chromedp.Click(chromedp.CSS(`nav a[href="/ui/servers"]`)))
	b.waitUntil("the leader", `document.querySelector("#servers-list")?.innerText.includes("leader")`, 30*time.Second)
	b.screenshot("09-servers")
	b.run("open the evaluations", chromedp.Click(chromedp.CSS(`nav a[href="/ui/evaluations"]`)))
	b.waitUntil("the job's evaluations", `document.querySelector("#evals-list")?.innerText.includes("job-register")`, 30*time.Second)
	b.screenshot("10-evaluations")

	// The links Nomad's CLI prints load the pages they name.
	for _, link := range []struct{ path, cond string }{
		{"/ui/jobs/uiweb@default", `document.querySelector("h1")?.innerText.startsWith("uiweb")`},
		{allocPath, `document.querySelector("h1")?.innerText.startsWith("Allocation")`},
		{"/ui/clients", `document.querySelector("#clients-list table")`},
	} {
		b.run("open "+link.path, chromedp.Navigate(a.httpAddr()+link.path))
		b.waitUntil(link.path+" rendered", link.cond, 30*time.Second)
	}
	b.checkNoErrors()
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

// With ACLs on, the UI says what is wrong when the browser has no token
// (or one that does not allow a page), and works once a token that
// allows it is typed in; the token is kept in the browser across loads.
func TestWebUIWithACLTokens(t *testing.T) {
	b := newBrowser(t)
	a := newAgent(t, agentSpec{name: "uiacl", extra: singleMachine + aclBlock})
	mgmt, _, read := aclTokens(t, a)
	a.token = mgmt
	registerJob(t, a, uiJob("uiacl", "acl", 32), 30*time.Second)
	stopAtCleanup(t, a, "uiacl")

	b.run("open the jobs", chromedp.Navigate(a.httpAddr()+"/ui/jobs"))
	b.waitUntil("a refusal that says what to do", `!document.querySelector("#banner").hidden && `+
		`document.querySelector("#banner").innerText.includes("Permission denied") && `+
		`document.querySelector("#banner").innerText.includes("ACL token")`, 30*time.Second)
	b.screenshot("01-jobs-without-token")

	b.run("save the read token",
		chromedp.SetValue(chromedp.CSS(`#token-input`), read),
		chromedp.Click(chromedp.CSS(`#token-form button[type="submit"]`)))
	b.waitUntil("the job, read with the token", `document.querySelector('a.job-link[data-job="uiacl"]') && document.querySelector("#banner").hidden`, 30*time.Second)
	b.waitUntil("the token's name", `document.querySelector("#token-status").innerText === "as read"`, 30*time.Second)
	b.screenshot("02-jobs-with-token")

	// The read token may not read nodes: the clients page says so.
	b.run("open the clients", chromedp.Click(chromedp.CSS(`nav a[href="/ui/clients"]`)))
	b.waitUntil("the refusal of the clients", `!document.querySelector("#banner").hidden && `+
		`document.querySelector("#banner").innerText.includes("Permission denied for /v1/nodes") && `+
		`document.querySelector("#banner").innerText.includes("does not allow")`, 30*time.Second)
	b.screenshot("03-clients-refused")

	// A fresh load keeps the token.
	b.run("open the job", chromedp.Navigate(a.httpAddr()+"/ui/jobs/uiacl@default"))
	b.waitUntil("the job's page", `document.querySelector("h1")?.innerText.startsWith("uiacl") && document.querySelector("#banner").hidden`, 30*time.Second)

	// Clearing the token refuses again.
	b.run("clear the token", chromedp.Click(chromedp.CSS(`#token-clear`)))
	b.waitUntil("the refusal without a token", `document.querySelector("#banner").innerText.includes("no token is saved")`, 30*time.Second)
	b.checkNoErrors()
}

// The words the UI uses for placement failures and job diffs, checked in
// the browser on the modules the agent serves, for cases the cluster
// test does not make (a constraint, a datacenter without nodes, a task
// added to a group).
func TestWebUIWordsForFailuresAndDiffs(t *testing.T) {
	b := newBrowser(t)
	a := newAgent(t, agentSpec{name: "uiwords", extra: singleMachine})
	waitFor(t, 60*time.Second, func() (bool, string) {
		leader, err := a.api().Status().Leader()
		return err == nil && leader != "", fmt.Sprintf("leader %q (%v)", leader, err)
	})
	b.run("open the UI", chromedp.Navigate(a.httpAddr()+"/ui/servers"))
	b.waitUntil("the application", `document.querySelector("#servers-list")`, 30*time.Second)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`(async () => {
		const f = await import("/ui/assets/js/format.js");
		const d = await import("/ui/assets/js/diff.js");
		const lines = (el) => Array.from(el.querySelectorAll("strong, li, div")).map((e) => e.textContent).join("\n");
		return {
			constraint: lines(f.placementFailure("web", {CoalescedFailures: 2, NodesEvaluated: 3, NodesFiltered: 2,
				NodesAvailable: {dc1: 3}, ConstraintFiltered: {"${attr.kernel.name} = windows": 2},
				NodesExhausted: 1, DimensionExhausted: {memory: 1}, ClassExhausted: {"v1:123": 1, gpu: 1}})),
			nodc: lines(f.placementFailure("db", {NodesEvaluated: 0, NodesAvailable: {dc2: 0}})),
			diff: lines(d.render({Type: "Edited", Fields: [{Type: "None", Name: "Priority", Old: "50", New: "50"}],
				TaskGroups: [{Type: "Edited", Name: "web",
					Fields: [{Type: "Edited", Name: "Count", Old: "1", New: "3"}],
					Tasks: [{Type: "Added", Name: "side", Fields: [{Type: "Added", Name: "Driver", New: "raw_exec"}]},
						{Type: "None", Name: "app"}],
					Updates: {"create": 2}}]})),
			nochange: d.render({Type: "None"}).textContent,
		};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"constraint": "Task group \"web\": 3 allocations could not be placed.\n" +
			"3 nodes evaluated (available: 3 in dc1).\n" +
			"2 nodes filtered by constraint ${attr.kernel.name} = windows.\n" +
			"1 node out of memory.\n" +
			"1 node of class \"gpu\" had no room left.",
		"nodc": "Task group \"db\": 1 allocation could not be placed.\n" +
			"No ready, eligible nodes in datacenter dc2.",
		"diff": "~ group \"web\"\n" +
			"  ~ Count: \"1\" => \"3\"\n" +
			"  + task \"side\"\n" +
			"    + Driver: raw_exec\n" +
			"    2 create",
		"nochange": "No changes to the job specification.",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got: %q\nwant: %q", k, got[k], w)
		}
	}
	b.checkNoErrors()
}
