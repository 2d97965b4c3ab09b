package execinit

import (
	"reflect"
	"testing"
)

func TestDroppableMappingsAreTheExecutablesUnmodifiedReadOnlyOnes(t *testing.T) {
	smaps := []byte(`00400000-00800000 r-xp 00000000 08:01 42 /usr/bin/drover
Size:               4096 kB
Rss:                3000 kB
Anonymous:             0 kB
00800000-00a00000 r--p 00400000 08:01 42 /usr/bin/drover
Rss:                1000 kB
Anonymous:             0 kB
00a00000-00a10000 r--p 00600000 08:01 42 /usr/bin/drover
Anonymous:             8 kB
00a08000-00a09000 r--p 00608000 08:01 42 /usr/bin/drover
Anonymous:             0 kB
Swap:                  4 kB
00a10000-00a20000 rw-p 00610000 08:01 42 /usr/bin/drover
Anonymous:             0 kB
00b00000-00b10000 r-xp 00000000 08:01 43 /usr/lib/libc.so.6
Anonymous:             0 kB
00c00000-00c10000 rw-p 00000000 00:00 0
Anonymous:            64 kB
7ffd0000-7ffd1000 r-xp 00000000 00:00 0                                  [vdso]
Anonymous:             0 kB
`)
	got := droppableMappings(smaps, "/usr/bin/drover")
	want := []mapping{{0x400000, 0x800000}, {0x800000, 0xa00000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %x, want %x (text and untouched rodata only: not the relocated, in memory or swapped out, the writable, another file's or anonymous)", got, want)
	}
}
