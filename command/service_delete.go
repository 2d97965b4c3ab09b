package command

const serviceDeleteHelp = `
Usage: drover service delete [options] <service name> <service id>

  Delete one registration of a native (provider = "nomad") service. Its
  client registers it again while the allocation runs; this is for
  registrations left behind. "service info -verbose" shows the IDs. Needs
  submit-job in the service's namespace.
`

func serviceDelete(m *Meta, args []string) int {
	fs := m.flagSet("service delete", serviceDeleteHelp)
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 2 {
		return m.usageError(fs, "This command takes two arguments: <service name> and <service id>")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	if _, err := client.Services().Delete(fs.Arg(0), fs.Arg(1), nil); err != nil {
		return m.errorf("Error deleting service registration: %v", err)
	}
	m.out("Successfully deleted service registration")
	return 0
}
