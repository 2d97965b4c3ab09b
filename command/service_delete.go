package command

const serviceDeleteHelp = `
Usage: drover service delete [options] <service name> <service id>

  Delete one registration of a native (provider = "nomad") service. Its
  client registers it again while the allocation runs; this is for
  registrations left behind. "service info -verbose" shows the IDs. Needs
  submit-job in the service's namespace.
`

func serviceDelete(m *Meta, args []string) int {
	c := m.cmdLine("service delete", serviceDeleteHelp, takes(2, "<service name> and <service id>"))
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	if _, err := client.Services().Delete(c.Arg(0), c.Arg(1), nil); err != nil {
		return m.errorf("Error deleting service registration: %v", err)
	}
	m.out("Successfully deleted service registration")
	return 0
}
