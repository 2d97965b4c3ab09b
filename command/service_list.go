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
	c := m.cmdLine("service list", serviceListHelp, noArgs).withJSON()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	list, _, err := client.Services().List(nil)
	if err != nil {
		return m.errorf("Error listing services: %v", err)
	}
	n := 0
	for _, ns := range list {
		n += len(ns.Services)
	}
	return c.showList(list, n, "No service registrations found", func() string {
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
		return columns(rows)
	})
}
