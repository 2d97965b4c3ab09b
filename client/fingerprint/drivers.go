package fingerprint

import (
	"maps"
	"slices"

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
