package taskuser

import (
	"errors"
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	cases := []struct {
		name    string
		options map[string]string
		driver  string
		user    string
		denied  bool
	}{
		{"root is denied for exec by default", nil, "exec", "root", true},
		{"nobody is allowed for exec by default", nil, "exec", "nobody", false},
		{"raw_exec is not checked by default", nil, "raw_exec", "root", false},
		{"an operator's list replaces the default", map[string]string{DenylistOption: "admin, ops"}, "exec", "ops", true},
		{"an operator's list no longer holds root", map[string]string{DenylistOption: "admin"}, "exec", "root", false},
		{"an empty denylist turns the check off", map[string]string{DenylistOption: ""}, "exec", "root", false},
		{"checked drivers can name raw_exec", map[string]string{CheckedDriversOption: "exec,raw_exec"}, "raw_exec", "root", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ParsePolicy(c.options).Check(c.driver, c.user, nil)
			if (err != nil) != c.denied {
				t.Fatalf("Check(%s, %s) = %v, want denied=%v", c.driver, c.user, err, c.denied)
			}
			var de *DeniedError
			if err != nil && (!errors.As(err, &de) || !strings.Contains(err.Error(), `user "`+c.user+`"`) ||
				!strings.Contains(err.Error(), "user.denylist") || !strings.Contains(err.Error(), c.driver)) {
				t.Fatalf("error %q must name the user, the setting and the driver", err)
			}
		})
	}
}

func TestLookupResolvesNamesAndNumbers(t *testing.T) {
	for _, name := range []string{"nobody", "65534"} {
		u, err := Lookup(name)
		if err != nil || u.UID != 65534 {
			t.Fatalf("Lookup(%q) = %+v, %v", name, u, err)
		}
	}
	if _, err := Lookup("no-such-user-here"); err == nil || !strings.Contains(err.Error(), "no-such-user-here") {
		t.Fatalf("an unknown user must be refused by name, got %v", err)
	}
}
