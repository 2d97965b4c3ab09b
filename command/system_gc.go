package command

const systemGCHelp = `
Usage: drover system gc [options]

  Run garbage collection now instead of waiting for the thresholds. Only
  terminal jobs, evaluations, allocations, deployments and nodes are
  removed; nothing still running is touched.
`

func systemGC(m *Meta, args []string) int {
	fs := m.flagSet("system gc", systemGCHelp)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return m.usageError(fs, "This command takes no arguments")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	if err := client.System().GarbageCollect(nil); err != nil {
		return m.errorf("Error running system garbage collection: %v", err)
	}
	return 0
}
