package drivers

// HealthNotifier is a driver whose health depends on something outside
// the client (docker: its daemon) and that notices when that something may
// have changed (a daemon call failed for want of a connection), so that
// the client fingerprints it again at once instead of at its next period.
type HealthNotifier interface {
	// HealthMayHaveChanged receives a value whenever the driver saw a sign
	// that its Fingerprint may now answer differently. The channel is
	// buffered: a notice the client has not taken yet absorbs later ones.
	HealthMayHaveChanged() <-chan struct{}
}
