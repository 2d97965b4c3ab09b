package api

import "testing"

func TestCanonicalizeEachFillsEveryBlock(t *testing.T) {
	as := []*Affinity{{}, {Weight: new(int8(-20))}}
	canonicalizeEach(as)
	if *as[0].Weight != 50 || *as[1].Weight != -20 {
		t.Fatalf("weights %d and %d, want the default 50 and the -20 set", *as[0].Weight, *as[1].Weight)
	}
	canonicalizeEach([]*Affinity(nil))
}
