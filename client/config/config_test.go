package config

import (
	"strings"
	"testing"
)

func TestValidateNamesEveryProblem(t *testing.T) {
	c := &Config{DataDir: "relative", EnabledDrivers: []string{"qemu"}, Reserved: Reserved{ReservedPorts: "x"}}
	c.Canonicalize()
	err := c.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"absolute", "servers", "qemu", "reserved ports"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDefaultsAndOptions(t *testing.T) {
	c := DefaultConfig()
	if c.GCMaxAllocs != 50 || c.GCDiskUsageThreshold != 80 || c.UpdateInterval.Milliseconds() != 200 {
		t.Fatalf("defaults: %+v", c)
	}
	c.Options["driver.raw_exec.enable"] = "1"
	c.Options["env.denylist"] = "A, B"
	if !c.ReadBool("driver.raw_exec.enable", false) || len(c.ReadList("env.denylist")) != 2 {
		t.Fatal("options")
	}
}
