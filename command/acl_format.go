package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/drover-sched/drover/api"
)

// aclOutputHelp documents the -json and -t flags every ACL read takes.
const aclOutputHelp = `
  -json
    Output in JSON format.

  -t
    Format and display the output using a Go template.
`

// formatACLToken lays a token out as Nomad's acl token commands do. The
// secret is only known in the answer that created the token; elsewhere
// Drover cannot show it (it keeps only a hash) and says so.
func formatACLToken(t *api.ACLToken) string {
	secret := t.SecretID
	if secret == "" {
		secret = "<hidden>"
	}
	expiry := "<none>"
	if t.ExpirationTime != nil {
		expiry = formatTime(*t.ExpirationTime)
	}
	policies := "n/a"
	if t.Type != "management" {
		policies = fmt.Sprint(t.Policies)
	}
	return keyValues([]string{
		"Accessor ID|" + t.AccessorID,
		"Secret ID|" + secret,
		"Name|" + t.Name,
		"Type|" + t.Type,
		fmt.Sprintf("Global|%t", t.Global),
		"Create Time|" + formatTime(t.CreateTime),
		"Expiry Time|" + expiry,
		fmt.Sprintf("Create Index|%d", t.CreateIndex),
		fmt.Sprintf("Modify Index|%d", t.ModifyIndex),
		"Policies|" + policies,
	}) + "\nRoles\n<none>\n"
}

// readInput reads a file argument, "-" meaning stdin, up to limit bytes.
// Its errors read well after "Error reading ".
func (m *Meta) readInput(path string, limit int64, what string) ([]byte, error) {
	var r io.Reader = m.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", what, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: it is larger than %d bytes, the most allowed", what, limit)
	}
	return b, nil
}

// trimmedInput reads a one-line value (a secret) from a file or stdin.
func (m *Meta) trimmedInput(path, what string) (string, error) {
	b, err := m.readInput(path, 1024, what)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
