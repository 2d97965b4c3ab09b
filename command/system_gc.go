package command

const systemGCHelp = `
Usage: drover system gc [options]

  Run garbage collection now instead of waiting for the thresholds. Only
  terminal jobs, evaluations, allocations, deployments and nodes are
  removed; nothing still running is touched.
`

func systemGC(m *Meta, args []string) int {
	client, code, ok := m.cmdLine("system gc", systemGCHelp, noArgs).start(args)
	if !ok {
		return code
	}
	if err := client.System().GarbageCollect(nil); err != nil {
		return m.errorf("Error running system garbage collection: %v", err)
	}
	return 0
}
