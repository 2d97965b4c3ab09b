package api

// Resources is what a task asks of its node. CPU is in MHz, memory and disk
// in MiB.
type Resources struct {
	CPU *int

	// Cores reserves whole cores instead of CPU shares; a task sets either
	// CPU or Cores.
	Cores *int

	MemoryMB *int

	// MemoryMaxMB lets the task use memory above MemoryMB, up to this
	// limit, when the node has it free. Scheduling counts only MemoryMB.
	MemoryMaxMB *int

	DiskMB *int

	// Networks at task level are the pre-0.12 way to ask for ports; groups
	// carry them now. Kept so that old jobs decode.
	Networks []*NetworkResource

	// Devices are kept as data; Drover does not schedule devices yet.
	Devices []*RequestedDevice
}

// DefaultResources returns what a task gets when its resources block leaves
// a field unset.
func DefaultResources() *Resources {
	return &Resources{
		CPU:      new(100),
		Cores:    new(0),
		MemoryMB: new(300),
	}
}

// MinResources returns the smallest resources a task may ask for.
func MinResources() *Resources {
	return &Resources{
		CPU:      new(1),
		Cores:    new(0),
		MemoryMB: new(10),
	}
}

// Canonicalize fills unset fields. CPU defaults to 100 MHz only when Cores is
// unset too: a task that reserves cores gets no CPU shares on top.
func (r *Resources) Canonicalize() {
	d := DefaultResources()
	if r.Cores == nil {
		r.Cores = d.Cores
		if r.CPU == nil {
			r.CPU = d.CPU
		}
	}
	if r.CPU == nil {
		r.CPU = new(0)
	}
	if r.MemoryMB == nil {
		r.MemoryMB = d.MemoryMB
	}
	canonicalizeEach(r.Devices)
}

// RequestedDevice asks for Count devices matching Name, which is "type",
// "vendor/type" or "vendor/type/model" (e.g. "nvidia/gpu").
type RequestedDevice struct {
	Name        string
	Count       *uint64
	Constraints []*Constraint
	Affinities  []*Affinity
}

// Canonicalize defaults the count to one device.
func (d *RequestedDevice) Canonicalize() {
	if d.Count == nil {
		d.Count = new(uint64(1))
	}
	canonicalizeEach(d.Affinities)
}
