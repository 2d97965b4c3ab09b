package docker

import (
	"context"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
	"github.com/drover-sched/drover/structs"
)

// tagTestImage gives the test image a tag of its own, removed at the end.
func tagTestImage(t *testing.T, cli *client.Client) string {
	t.Helper()
	ref := "drover-test/gc:" + structs.GenerateUUID()[:8]
	if err := cli.ImageTag(t.Context(), dockerimage.Ref, ref); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = cli.ImageRemove(context.Background(), ref, image.RemoveOptions{}) })
	return ref
}

func imagePresent(t *testing.T, cli *client.Client, ref string) bool {
	t.Helper()
	_, err := cli.ImageInspect(t.Context(), ref)
	if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestUnusedImageIsRemovedAfterTheDelay(t *testing.T) {
	clk := clock.NewFake(time.Now())
	d, cli := newTestDriver(t, func(o *Options) {
		o.Clock = clk
		o.Config.GC.Image = true
		o.Config.GC.ImageDelay = 3 * time.Minute
	})
	ref := tagTestImage(t, cli)
	run := func() {
		tt := newTestTask(t, cli, map[string]any{"image": ref, "command": "true"})
		if _, err := d.StartTask(tt.cfg); err != nil {
			t.Fatal(err)
		}
		waitExit(t, d, tt.cfg.ID, 30*time.Second)
		if err := d.DestroyTask(tt.cfg.ID, false); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := d.images.pendingRemovals(); n != 1 {
		t.Fatalf("pending removals after the last user = %d, want 1", n)
	}
	clk.Advance(2 * time.Minute)
	if !imagePresent(t, cli, ref) {
		t.Fatal("image removed before image_delay")
	}
	// A task using it again cancels the removal; its end schedules anew.
	run()
	clk.Advance(2 * time.Minute)
	if !imagePresent(t, cli, ref) {
		t.Fatal("image removed by the removal its reuse cancelled")
	}
	clk.Advance(time.Minute + time.Second)
	waitFor(t, "the unused image to be removed", 20*time.Second, func() bool { return !imagePresent(t, cli, ref) })
	if !imagePresent(t, cli, dockerimage.Ref) {
		t.Fatal("removing the task's tag removed the image's other tag")
	}
}

func TestImageInUseIsNotRemoved(t *testing.T) {
	clk := clock.NewFake(time.Now())
	d, cli := newTestDriver(t, func(o *Options) {
		o.Clock = clk
		o.Config.GC.Image = true
		o.Config.GC.ImageDelay = time.Minute
	})
	ref := tagTestImage(t, cli)
	a := newTestTask(t, cli, map[string]any{"image": ref, "command": "sleep", "args": []any{"300"}})
	start(t, d, a)
	b := newTestTask(t, cli, map[string]any{"image": ref, "command": "true"})
	if _, err := d.StartTask(b.cfg); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, b.cfg.ID, 30*time.Second)
	if err := d.DestroyTask(b.cfg.ID, false); err != nil {
		t.Fatal(err)
	}
	if n := d.images.pendingRemovals(); n != 0 {
		t.Fatalf("a removal was scheduled while another task uses the image (%d)", n)
	}
	clk.Advance(time.Hour)
	if !imagePresent(t, cli, ref) {
		t.Fatal("an image in use was removed")
	}
}

// testRunLabel marks the containers of one test binary's run, the only
// ones its reapers may remove.
const testRunLabel = "io.drover.test_run"

var testRun = structs.GenerateUUID()

// testNode is the node ID the reaper tests' drivers run as.
const testNode = "reaper-test-node"

func testNodeID() string { return testNode }

// createLabelled creates (without starting) a container with labels.
func createLabelled(t *testing.T, cli *client.Client, labels map[string]string) string {
	t.Helper()
	c, err := cli.ContainerCreate(t.Context(), &container.Config{Image: dockerimage.Ref, Cmd: []string{"true"}, Labels: labels}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
	})
	return c.ID
}

func containerExists(t *testing.T, cli *client.Client, id string) bool {
	t.Helper()
	_, err := cli.ContainerInspect(t.Context(), id)
	if err != nil && !cerrdefs.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestReaperRemovesOnlyDanglingDroverContainers(t *testing.T) {
	clk := clock.NewFake(time.Now())
	live := structs.GenerateUUID()
	d, cli := newTestDriver(t, func(o *Options) {
		o.Clock = clk
		o.Config.GC.Dangling.CreationGrace = time.Minute
		o.AllocLive = func(id string) bool { return id == live }
		o.NodeID = testNodeID
		o.reapOnly = testRunLabel + "=" + testRun
	})
	node := func(id string) map[string]string {
		return map[string]string{LabelAllocID: id, LabelNodeID: testNode, testRunLabel: testRun}
	}
	dead := createLabelled(t, cli, node(structs.GenerateUUID()))
	ofLive := createLabelled(t, cli, node(live))
	notOurs := createLabelled(t, cli, map[string]string{"app": "someone-else", testRunLabel: testRun})
	otherNode := createLabelled(t, cli, map[string]string{LabelAllocID: structs.GenerateUUID(), LabelNodeID: "another-node", testRunLabel: testRun})
	tt := newTestTask(t, cli, shell("sleep 300"))
	tt.cfg.Config["labels"] = map[string]any{testRunLabel: testRun}
	h := start(t, d, tt)

	if n, err := d.ReapDangling(t.Context()); err != nil || n != 0 {
		t.Fatalf("reap within the creation grace removed %d (%v), want 0", n, err)
	}
	clk.Advance(2 * time.Minute)
	if n, err := d.ReapDangling(t.Context()); err != nil || n != 1 {
		t.Fatalf("reap removed %d (%v), want 1", n, err)
	}
	if containerExists(t, cli, dead) {
		t.Error("the container of a dead alloc is still there")
	}
	for name, id := range map[string]string{"a live alloc's": ofLive, "a foreign": notOurs, "another node's": otherNode, "a tracked task's": containerIDOf(t, h)} {
		if !containerExists(t, cli, id) {
			t.Errorf("the reaper removed %s container", name)
		}
	}
}

func TestReaperRunsEveryPeriod(t *testing.T) {
	clk := clock.NewFake(time.Now().Add(time.Hour))
	d, cli := newTestDriver(t, func(o *Options) {
		o.Clock = clk
		o.Config.GC.Dangling = DanglingConfig{Enabled: true, Period: 5 * time.Minute, CreationGrace: time.Minute}
		o.NodeID = testNodeID
		o.reapOnly = testRunLabel + "=" + testRun
	})
	_ = d
	dead := createLabelled(t, cli, map[string]string{LabelAllocID: structs.GenerateUUID(), LabelNodeID: testNode, testRunLabel: testRun})
	if !clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the reaper is not waiting on the clock")
	}
	clk.Advance(5 * time.Minute)
	waitFor(t, "the reaper to remove the dangling container", 20*time.Second, func() bool { return !containerExists(t, cli, dead) })
}
