package command

import "flag"

// flagWasSet reports whether name was given on the command line, for flags
// whose zero value is meaningful (-check-index 0 means "must not exist").
func (c *cmdLine) flagWasSet(name string) bool {
	set := false
	c.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
