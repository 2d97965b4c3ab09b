package exec

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestTaskCapsFollowAllowCapsAddAndDrop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		allow     []string
		add, drop []string
		root      bool
		want      []uint
		err       string
	}{
		{"nobody gets nothing by default", DefaultAllowCaps, nil, nil, false, []uint{}, ""},
		{"nobody gets what cap_add asks within allow_caps", DefaultAllowCaps, []string{"net_bind_service"}, nil, false, []uint{unix.CAP_NET_BIND_SERVICE}, ""},
		{"root gets allow_caps", []string{"chown", "kill"}, nil, nil, true, []uint{unix.CAP_CHOWN, unix.CAP_KILL}, ""},
		{"root less cap_drop", []string{"chown", "kill"}, nil, []string{"kill"}, true, []uint{unix.CAP_CHOWN}, ""},
		{"cap_drop all then cap_add", []string{"chown", "kill"}, []string{"kill"}, []string{"all"}, true, []uint{unix.CAP_KILL}, ""},
		{"allow_caps all permits anything", []string{"all"}, []string{"sys_admin"}, nil, false, []uint{unix.CAP_SYS_ADMIN}, ""},
		{"cap_add outside allow_caps is refused", []string{"chown"}, []string{"sys_admin", "net_raw"}, nil, false, nil, "sys_admin, net_raw not allowed on this client; the exec plugin's allow_caps permits chown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := taskCaps(tc.allow, tc.add, tc.drop, tc.root)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("caps %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestSetprivGetsTheTasksCredentialsAndCaps(t *testing.T) {
	nobody := strings.Join(setprivArgs(credentials{Uid: 65534, Gid: 65534, Groups: []uint32{65534}}, nil), " ")
	for _, want := range []string{"--reuid=65534", "--regid=65534", "--groups=65534", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs"} {
		if !strings.Contains(nobody, want) {
			t.Errorf("%q lacks %s", nobody, want)
		}
	}
	withCap := strings.Join(setprivArgs(credentials{Uid: 1000, Gid: 1000}, []uint{unix.CAP_NET_BIND_SERVICE}), " ")
	for _, want := range []string{"--clear-groups", "--bounding-set=-all,+net_bind_service", "--ambient-caps=+net_bind_service"} {
		if !strings.Contains(withCap, want) {
			t.Errorf("%q lacks %s", withCap, want)
		}
	}
	if root := strings.Join(setprivArgs(credentials{}, nil), " "); strings.Contains(root, "no-new-privs") {
		t.Errorf("root: %q", root)
	}
}
