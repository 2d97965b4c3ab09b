package fingerprint

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestApplyDriversReplacesTheDriversAttributes(t *testing.T) {
	healthy := &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: map[string]string{"version": "20.10"}}
	down := &structs.DriverInfo{Detected: true, HealthDescription: "Failed to connect"}
	node := &structs.Node{
		Drivers:    map[string]*structs.DriverInfo{"docker": healthy, "exec": {Detected: true, Healthy: true}},
		Attributes: structs.NewAttributes(map[string]string{"driver.docker": "1", "driver.docker.version": "20.10", "driver.exec": "1", "kernel.name": "linux"}),
	}
	if ApplyDrivers(node, map[string]*structs.DriverInfo{"docker": healthy}) {
		t.Fatal("the same fingerprint reported as a change")
	}
	if !ApplyDrivers(node, map[string]*structs.DriverInfo{"docker": down}) {
		t.Fatal("a driver turning unhealthy is not a change")
	}
	want := map[string]string{"driver.exec": "1", "kernel.name": "linux", "driver.docker.version": ""}
	for k, v := range want {
		if got, ok := node.Attributes.Get(k); v == "" && ok || v != "" && got != v {
			t.Errorf("attribute %s = %q (set %v), want %q", k, got, ok, v)
		}
	}
	if _, ok := node.Attributes.Get("driver.docker"); ok {
		t.Error("an unhealthy driver still advertised")
	}
	if node.Drivers["docker"] != down || node.Drivers["exec"] == nil {
		t.Errorf("drivers = %+v", node.Drivers)
	}
	if !ApplyDrivers(node, map[string]*structs.DriverInfo{"docker": healthy}) {
		t.Fatal("a driver turning healthy again is not a change")
	}
	if node.Attributes.Value("driver.docker") != "1" || node.Attributes.Value("driver.docker.version") != "20.10" {
		t.Errorf("attributes after recovery = %v", node.Attributes)
	}
}
