package hoststats

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/mountinfo"
)

// fixture is a fake /proc whose mount table names real directories, so
// statfs works on them.
type fixture struct {
	root, data string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{root: t.TempDir(), data: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(f.root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "meminfo", "MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    600 kB\nBuffers:          10 kB\n")
	f.write(t, "uptime", "12345.67 999.00\n")
	f.write(t, "self/mounts", "proc /proc proc rw 0 0\n/dev/fake /with\\040space ext4 rw 0 0\noverlay "+f.data+" overlay rw 0 0\n")
	return f
}

func (f *fixture) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.root, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stat writes /proc/stat with two cores, each {user, system, idle}; the
// "cpu" line is their sum.
func (f *fixture) stat(t *testing.T, c0, c1 [3]uint64) {
	row := func(name string, user, system, idle uint64) string {
		return fmt.Sprintf("%s %d 0 %d %d 0 0 0 0 0 0\n", name, user, system, idle)
	}
	sum := [3]uint64{c0[0] + c1[0], c0[1] + c1[1], c0[2] + c1[2]}
	f.write(t, "stat", row("cpu", sum[0], sum[1], sum[2])+row("cpu0", c0[0], c0[1], c0[2])+row("cpu1", c1[0], c1[1], c1[2])+"intr 1 2 3\n")
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSampleReportsMemoryUptimeAndDisks(t *testing.T) {
	f := newFixture(t)
	f.stat(t, [3]uint64{10, 10, 80}, [3]uint64{50, 0, 50})
	now := time.Unix(1700000000, 0)
	s, err := NewSampler(f.root).Sample(now, f.data, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory != (Memory{Total: 1000 << 10, Free: 200 << 10, Available: 600 << 10, Used: 400 << 10}) {
		t.Fatalf("memory %+v", s.Memory)
	}
	if s.Uptime != 12345 || !s.Timestamp.Equal(now) {
		t.Fatalf("uptime %d, timestamp %v", s.Uptime, s.Timestamp)
	}
	// /dev/fake's mount point does not exist, so only the data dir's
	// filesystem (an overlay, listed because it holds the alloc dir)
	// can be measured.
	if len(s.Disks) != 1 || s.Disks[0].Device != "overlay" || s.Disks[0].Mountpoint != f.data || s.Disks[0].Size == 0 {
		t.Fatalf("disks %+v", s.Disks)
	}
	if s.AllocDir.Device != "overlay" || s.AllocDir.Size == 0 || s.AllocDir.UsedPercent < 0 || s.AllocDir.UsedPercent > 100 {
		t.Fatalf("alloc dir %+v", s.AllocDir)
	}
}

func TestCPUUseIsSinceBootThenSinceThePreviousSample(t *testing.T) {
	f := newFixture(t)
	smp := NewSampler(f.root)
	f.stat(t, [3]uint64{10, 10, 80}, [3]uint64{50, 0, 50})
	s, err := smp.Sample(time.Now(), f.data, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.CPU) != 2 || s.CPU[0].Name != "cpu0" || !near(s.CPU[0].User, 10) || !near(s.CPU[0].System, 10) || !near(s.CPU[0].Idle, 80) ||
		!near(s.CPU[1].User, 50) || !near(s.CPU[1].Idle, 50) {
		t.Fatalf("since boot: %+v", s.CPU)
	}
	// Busy 70 of 200 ticks over both cores: 35% of 2000 MHz.
	if !near(s.CPUTicksConsumed, 700) {
		t.Fatalf("ticks consumed %v", s.CPUTicksConsumed)
	}

	// 100 more ticks per core: cpu0 all busy (user), cpu1 all idle.
	f.stat(t, [3]uint64{110, 10, 80}, [3]uint64{50, 0, 150})
	s, err = smp.Sample(time.Now(), f.data, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !near(s.CPU[0].User, 100) || !near(s.CPU[0].Idle, 0) || !near(s.CPU[1].Idle, 100) || !near(s.CPUTicksConsumed, 1000) {
		t.Fatalf("since the previous sample: %+v, ticks %v", s.CPU, s.CPUTicksConsumed)
	}

	// No tick has passed: the share since boot, never NaN.
	s, err = smp.Sample(time.Now(), f.data, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !near(s.CPU[0].User, 55) || !near(s.CPU[1].Idle, 75) {
		t.Fatalf("without a tick: %+v", s.CPU)
	}
}

func TestMountEscapes(t *testing.T) {
	if got := mountinfo.Unescape(`/mnt/with\040space\134x`); got != `/mnt/with space\x` {
		t.Fatalf("got %q", got)
	}
	if got := mountinfo.Unescape(`/end\04`); got != `/end\04` {
		t.Fatalf("a cut escape is kept as is: %q", got)
	}
}

func TestSampleOfTheRealHost(t *testing.T) {
	s, err := NewSampler("/proc").Sample(time.Now(), t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if s.Memory.Total == 0 || len(s.CPU) == 0 || s.Uptime == 0 || s.AllocDir.Size == 0 || len(s.Disks) == 0 {
		t.Fatalf("host sample %+v", s)
	}
}
