package fingerprint

import (
	"maps"
	"slices"
	"strings"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// driversFingerprinter describes the loaded drivers: driver.<name> = "1"
// for each detected, healthy driver, and each detected driver's own
// attributes under driver.<name>.
type driversFingerprinter struct {
	drivers map[string]*structs.DriverInfo
}

// Drivers are visited by name so that, should a driver's attribute and
// another driver's name collide, the outcome is the same every time.
func (f driversFingerprinter) Fingerprint(_ *config.Config, node *Target) error {
	for _, n := range slices.Sorted(maps.Keys(f.drivers)) {
		d := f.drivers[n]
		if d.Detected && d.Healthy {
			node.Attributes["driver."+n] = "1"
		}
		if d.Detected {
			for k, v := range d.Attributes {
				node.Attributes["driver."+n+"."+k] = v
			}
		}
	}
	return nil
}

// ApplyDrivers replaces the node's driver fingerprints, and the driver.*
// attributes they make, with infos (the drivers named there; others stay).
// It reports whether anything the servers see changed: a driver's health
// or its attributes.
func ApplyDrivers(node *structs.Node, infos map[string]*structs.DriverInfo) bool {
	attrs := node.Attributes.Map()
	if attrs == nil {
		attrs = map[string]string{}
	}
	changed := false
	for name, info := range infos {
		old := node.Drivers[name]
		if old == nil || old.Detected != info.Detected || old.Healthy != info.Healthy || old.HealthDescription != info.HealthDescription {
			changed = true
		}
		for k := range attrs {
			if k == "driver."+name || strings.HasPrefix(k, "driver."+name+".") {
				delete(attrs, k)
			}
		}
	}
	target := &Target{Node: node, Attributes: attrs}
	_ = driversFingerprinter{drivers: infos}.Fingerprint(nil, target)
	next := structs.NewAttributes(attrs)
	if !next.Equal(node.Attributes) {
		changed = true
	}
	if !changed {
		return false
	}
	drivers := make(map[string]*structs.DriverInfo, len(node.Drivers)+len(infos))
	maps.Copy(drivers, node.Drivers)
	maps.Copy(drivers, infos)
	node.Drivers = drivers
	node.Attributes = next
	return true
}
