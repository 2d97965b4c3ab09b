package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/drover-sched/drover/api"
)

// cmdLine is one verb's command line and the prologue every verb runs on
// it: parse the flags (the verb's own and the general ones of
// clientFlagsHelp), check the positional arguments, build the client, and
// print the -json or -t output the verb offers. It embeds the flag set,
// so a verb declares its own flags on it and reads its arguments (Arg,
// NArg) as with any flag.FlagSet. A verb reads:
//
//	c := m.cmdLine("acl token info", aclTokenInfoHelp, takes(1, "<accessor_id>")).withOutput()
//	client, code, ok := c.start(args)
//	if !ok {
//		return code
//	}
//	token, _, err := client.ACLTokens().Info(c.Arg(0), nil)
//	if err != nil {
//		return m.errorf("Error fetching token: %v", err)
//	}
//	return c.show(token, func() string { return formatACLToken(token) })
//
// A verb that acts on one object names its kind instead, and gets the full
// ID its first argument is a prefix of (resolve.go):
//
//	client, allocID, code, ok := c.startFor(args, allocKind)
//
// Each step that fails has printed why and returns the exit code, so the
// verb only passes it on.
type cmdLine struct {
	*flag.FlagSet
	m *Meta
	// args is what the verb takes after its flags, checked by parse.
	args positional
	out  outputFlags
	// checkOut refuses -json with -t in parse; withOutput sets it.
	checkOut bool
	// verbose is -verbose, once parsed, for a verb made withVerbose: full
	// IDs, here and in the tables resolve prints.
	verbose bool
}

// cmdLine returns the command line of a verb that talks to an agent: its
// flag set with the general flags registered, and help that prints the
// verb's help text followed by theirs. Flags must precede arguments, as
// with Go's flag package and Nomad's CLI.
func (m *Meta) cmdLine(name, help string, args positional) *cmdLine {
	c := m.localCmdLine(name, help, args)
	c.StringVar(&m.address, "address", "", "")
	c.StringVar(&m.namespace, "namespace", "", "")
	c.StringVar(&m.region, "region", "", "")
	c.StringVar(&m.token, "token", "", "")
	c.StringVar(&m.caCert, "ca-cert", "", "")
	c.StringVar(&m.caPath, "ca-path", "", "")
	c.StringVar(&m.clientCert, "client-cert", "", "")
	c.StringVar(&m.clientKey, "client-key", "", "")
	c.StringVar(&m.tlsServerName, "tls-server-name", "", "")
	c.BoolVar(&m.tlsSkipVerify, "tls-skip-verify", false, "")
	m.help += clientFlagsHelp
	return c
}

// localCmdLine is cmdLine for a verb that does not talk to an agent (the
// tls verbs): only its own flags, and its help without the general ones.
func (m *Meta) localCmdLine(name, help string, args positional) *cmdLine {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m.help = strings.TrimSpace(help) + "\n"
	// The flag package calls Usage itself on -help and on a bad flag;
	// parse prints the help once, where each case wants it.
	fs.Usage = func() {}
	return &cmdLine{FlagSet: fs, m: m, args: args}
}

// withOutput registers -json and -t (aclOutputHelp documents them) and has
// parse refuse the two together, as Nomad does.
func (c *cmdLine) withOutput() *cmdLine {
	c.out.register(c.FlagSet)
	c.checkOut = true
	return c
}

// withJSON registers -json alone.
func (c *cmdLine) withJSON() *cmdLine {
	c.BoolVar(&c.out.json, "json", false, "")
	return c
}

// withVerbose registers -verbose.
func (c *cmdLine) withVerbose() *cmdLine {
	c.BoolVar(&c.verbose, "verbose", false, "")
	return c
}

// parse parses args and checks them, reporting the exit code to return
// early with: 0 for -help (the help is printed), 1 for a bad flag, -json
// with -t, or the wrong number of arguments (the problem is printed, then
// the help).
func (c *cmdLine) parse(args []string) (int, bool) {
	err := c.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(c.m.stdout, c.m.help)
		return 0, false
	case err != nil:
		fmt.Fprintf(c.m.stderr, "Error parsing arguments: %v\n\n", err)
		c.printHelp()
		return 1, false
	}
	if c.checkOut {
		if code, ok := c.checkOutput(); !ok {
			return code, false
		}
	}
	return c.checkArgs(c.args)
}

// checkOutput refuses -json with -t. parse calls it for a verb that asked
// withOutput; a verb that checks its arguments first calls it itself.
func (c *cmdLine) checkOutput() (int, bool) {
	if c.out.json && c.out.tmpl != "" {
		return c.usageError("Both -json and -t are not allowed"), false
	}
	return 0, true
}

// checkArgs refuses a number of positional arguments that want does not
// allow. parse checks the verb's own; a verb whose count depends on its
// flags is made with anyArgs and checks its count itself.
func (c *cmdLine) checkArgs(want positional) (int, bool) {
	if n := c.NArg(); n < want.min || (want.max >= 0 && n > want.max) {
		return c.usageError(want.usage), false
	}
	return 0, true
}

// usageError reports wrong arguments the way Nomad does: the problem, then
// the verb's help, exit 1.
func (c *cmdLine) usageError(msg string) int {
	fmt.Fprintf(c.m.stderr, "%s\n\n", msg)
	c.printHelp()
	return 1
}

// client builds the API client the general flags and the environment
// describe.
func (c *cmdLine) client() (*api.Client, int, bool) {
	client, err := c.m.client()
	if err != nil {
		return nil, c.m.errorf("%v", err), false
	}
	return client, 0, true
}

// start is parse, then client: the whole prologue of a verb that checks
// nothing of its own before it talks to the agent.
func (c *cmdLine) start(args []string) (*api.Client, int, bool) {
	if code, ok := c.parse(args); !ok {
		return nil, code, false
	}
	return c.client()
}

// print writes v as -json or -t asked, reporting whether it did; otherwise
// the verb prints its own layout.
func (c *cmdLine) print(v any) (int, bool) {
	return c.out.print(c.m, v)
}

// show prints v as -json or -t asked, or else the verb's own layout, which
// text returns (it is called only then).
func (c *cmdLine) show(v any, text func() string) int {
	if code, done := c.print(v); done {
		return code
	}
	fmt.Fprint(c.m.stdout, text())
	return 0
}

// showList is show for a list of n items: without -json or -t, an empty
// list prints the verb's none line ("No tokens found") instead of a table.
func (c *cmdLine) showList(v any, n int, none string, table func() string) int {
	if code, done := c.print(v); done {
		return code
	}
	if n == 0 {
		c.m.out("%s", none)
		return 0
	}
	fmt.Fprint(c.m.stdout, table())
	return 0
}

// positional is what a verb takes after its flags: how many arguments, and
// the sentence that tells someone who gave another number.
type positional struct {
	min, max int // max < 0: no limit
	usage    string
}

var (
	// noArgs is a verb that takes only flags.
	noArgs = positional{0, 0, "This command takes no arguments"}
	// anyArgs leaves the count to the verb (see checkArgs).
	anyArgs = positional{0, -1, ""}
)

// takes is exactly n arguments, with names as the help writes them:
// takes(1, "<job>"), takes(2, "<name> and <path>").
func takes(n int, names string) positional {
	return positional{n, n, fmt.Sprintf("This command takes %s %s: %s", countWord(n), argumentWord(n), names)}
}

// takesUpTo is min to max arguments: takesUpTo(0, 1, "[job]") is "at most
// one", takesUpTo(1, 2, "<allocation> [task]") is "one or two".
func takesUpTo(min, max int, names string) positional {
	if min == 0 {
		return positional{0, max, fmt.Sprintf("This command takes at most %s %s: %s", countWord(max), argumentWord(max), names)}
	}
	return positional{min, max, fmt.Sprintf("This command takes %s or %s arguments: %s", countWord(min), countWord(max), names)}
}

func countWord(n int) string {
	if words := []string{"no", "one", "two", "three"}; n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

func argumentWord(n int) string {
	if n == 1 {
		return "argument"
	}
	return "arguments"
}

// outputFlags are -json and -t, the output choices of Nomad's ACL and
// status commands.
type outputFlags struct {
	json bool
	tmpl string
}

func (o *outputFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.json, "json", false, "")
	fs.StringVar(&o.tmpl, "t", "", "")
}

// print writes v as JSON or through the template, reporting whether it
// did either.
func (o *outputFlags) print(m *Meta, v any) (int, bool) {
	switch {
	case o.json:
		return m.printJSON(v), true
	case o.tmpl != "":
		return m.printTemplate(o.tmpl, v), true
	}
	return 0, false
}

// printTemplate executes a -t template on v.
func (m *Meta) printTemplate(text string, v any) int {
	t, err := template.New("out").Parse(text)
	if err != nil {
		return m.errorf("Error parsing template %q: %v", text, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return m.errorf("Error executing template %q: %v", text, err)
	}
	m.out("%s", b.String())
	return 0
}

// printHelp prints the verb's help to stderr, after a problem with how
// it was called.
func (c *cmdLine) printHelp() { fmt.Fprint(c.m.stderr, c.m.help) }
