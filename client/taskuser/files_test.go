package taskuser

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testEtc writes a passwd and group file with a second uid-0 account.
func testEtc(t *testing.T) string {
	t.Helper()
	etc := t.TempDir()
	passwd := "root:x:0:0:root:/root:/bin/sh\n# comment\ntoor:x:0:0:other root:/root:/bin/sh\n" +
		"nobody:x:65534:65534:nobody:/:/bin/false\napp:x:1000:1000::/home/app:/bin/sh\n"
	group := "root:x:0:\nwheel:x:10:app,other\napp:x:1000:\nstaff:x:50:app\n"
	if err := os.WriteFile(filepath.Join(etc, "passwd"), []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "group"), []byte(group), 0o644); err != nil {
		t.Fatal(err)
	}
	return etc
}

func TestLookupFiles(t *testing.T) {
	etc := testEtc(t)
	for _, c := range []struct {
		name, want string
		uid        int
		groups     []int
	}{
		{"app", "app", 1000, []int{1000, 10, 50}},
		{"1000", "app", 1000, []int{1000, 10, 50}},
		{"toor", "toor", 0, []int{0}},
		{"0", "root", 0, []int{0}},
	} {
		u, err := LookupFiles(etc, c.name)
		if err != nil || u.Name != c.want || u.UID != c.uid || !slices.Equal(u.Groups, c.groups) {
			t.Fatalf("LookupFiles(%q) = %+v, %v; want %s uid %d groups %v", c.name, u, err, c.want, c.uid, c.groups)
		}
	}
	if _, err := LookupFiles(etc, "ghost"); err == nil || !strings.Contains(err.Error(), `"ghost"`) || !strings.Contains(err.Error(), "passwd") {
		t.Fatalf("an unknown user must be refused naming it and the file, got %v", err)
	}
	if _, err := LookupFiles("", "app"); !errors.Is(err, ErrNoEtc) {
		t.Fatalf("no /etc: got %v", err)
	}
}

// A denylist that holds root refuses every way of naming uid 0, as the
// driver resolves it, not only the string "root".
func TestCheckDeniesByUID(t *testing.T) {
	etc := testEtc(t)
	resolve := func(n string) (User, error) { return LookupFiles(etc, n) }
	noRoot := func(n string) (User, error) { // a task /etc without root
		if n == "root" {
			return User{}, errors.New("not found")
		}
		return LookupFiles(etc, n)
	}
	cases := []struct {
		name    string
		options map[string]string
		user    string
		resolve Resolver
		denied  string // the denylisted name the error must give, "" if allowed
	}{
		{"uid 0 by number", nil, "0", resolve, "root"},
		{"another name for uid 0", nil, "toor", resolve, "root"},
		{"uid 0 with leading zeros", nil, "00", resolve, "root"},
		{"root's uid is 0 even where the files lack root", nil, "toor", noRoot, "root"},
		{"a numeric user the files lack", nil, "0", func(string) (User, error) { return User{}, errors.New("none") }, "root"},
		{"an ordinary user", nil, "app", resolve, ""},
		{"an ordinary uid", nil, "1000", resolve, ""},
		{"an operator's list by name denies that user's uid", map[string]string{DenylistOption: "app"}, "1000", resolve, "app"},
		{"a list without root allows uid 0", map[string]string{DenylistOption: "app"}, "0", resolve, ""},
		{"an unchecked driver", map[string]string{CheckedDriversOption: "qemu"}, "0", resolve, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ParsePolicy(c.options).Check("exec", c.user, c.resolve)
			var de *DeniedError
			if c.denied == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want allowed", c.user, err)
				}
				return
			}
			if !errors.As(err, &de) || de.Denied != c.denied {
				t.Fatalf("Check(%q) = %v, want denied as %q", c.user, err, c.denied)
			}
			if msg := err.Error(); !strings.Contains(msg, `"`+c.user+`"`) || !strings.Contains(msg, `"`+c.denied+`"`) || !strings.Contains(msg, "user.denylist") {
				t.Fatalf("error %q must name the user, the denylisted name and the setting", msg)
			}
		})
	}
}
