package api

// EphemeralDisk is the allocation's scratch disk, shared by its tasks.
type EphemeralDisk struct {
	// Sticky asks to place a replacement on the same node, to reuse the data.
	Sticky *bool

	// Migrate copies the data to a replacement on another node.
	Migrate *bool

	// SizeMB is the space the scheduler reserves for the disk.
	SizeMB *int
}

// DefaultEphemeralDisk returns the disk of a group without an
// ephemeral_disk block: 300 MiB, neither sticky nor migrated.
func DefaultEphemeralDisk() *EphemeralDisk {
	return &EphemeralDisk{
		Sticky:  new(false),
		Migrate: new(false),
		SizeMB:  new(300),
	}
}

// Canonicalize fills unset fields from DefaultEphemeralDisk.
func (e *EphemeralDisk) Canonicalize() {
	d := DefaultEphemeralDisk()
	if e.Sticky == nil {
		e.Sticky = d.Sticky
	}
	if e.Migrate == nil {
		e.Migrate = d.Migrate
	}
	if e.SizeMB == nil {
		e.SizeMB = d.SizeMB
	}
}
