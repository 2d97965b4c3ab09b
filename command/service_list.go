package command

import (
	"fmt"
	"sort"
	"strings"
)

const serviceListHelp = `
Usage: drover service list [options]

  List the native (provider = "nomad") services of the namespace, each
  with the tags of its instances. -namespace=* lists every namespace the
  token may read.

List Options:

  -json  Print the list as JSON.
`

func serviceList(m *Meta, args []string) int {
	fs := m.flagSet("service list", serviceListHelp)
	asJSON := fs.Bool("json", false, "")
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
	list, _, err := client.Services().List(nil)
	if err != nil {
		return m.errorf("Error listing services: %v", err)
	}
	if *asJSON {
		return m.printJSON(list)
	}
	all := len(list) > 1 || m.namespace == "*"
	header := "Service Name|Tags"
	if all {
		header = "Service Name|Namespace|Tags"
	}
	rows := []string{header}
	for _, ns := range list {
		for _, s := range ns.Services {
			tags := append([]string(nil), s.Tags...)
			sort.Strings(tags)
			if all {
				rows = append(rows, fmt.Sprintf("%s|%s|[%s]", s.ServiceName, ns.Namespace, strings.Join(tags, ",")))
			} else {
				rows = append(rows, fmt.Sprintf("%s|[%s]", s.ServiceName, strings.Join(tags, ",")))
			}
		}
	}
	if len(rows) == 1 {
		m.out("No service registrations found")
		return 0
	}
	fmt.Fprint(m.stdout, columns(rows))
	return 0
}
