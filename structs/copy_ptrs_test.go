package structs

import "testing"

func TestCopyPtrsCopiesEachElementAndKeepsNilAndEmptyApart(t *testing.T) {
	if copyPtrs[VolumeMount](nil) != nil {
		t.Fatal("a nil list copied to a non-nil one")
	}
	if c := copyPtrs([]*VolumeMount{}); c == nil || len(c) != 0 {
		t.Fatalf("an empty list copied to %#v", c)
	}
	in := []*VolumeMount{{Volume: "a"}, {Volume: "b"}}
	c := copyPtrs(in)
	c[1].Volume = "changed"
	if len(c) != 2 || c[0] == in[0] || in[1].Volume != "b" || c[0].Volume != "a" {
		t.Fatalf("copy %+v %+v shares or loses the originals %+v %+v", c[0], c[1], in[0], in[1])
	}
}
