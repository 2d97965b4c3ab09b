package api

import "testing"

func TestCopyPtrCopiesTheValue(t *testing.T) {
	if copyPtr((*MigrateStrategy)(nil)) != nil {
		t.Fatal("a nil block copied to a non-nil one")
	}
	m := &MigrateStrategy{MaxParallel: new(2)}
	c := copyPtr(m)
	c.MaxParallel = new(3)
	if c == m || *m.MaxParallel != 2 {
		t.Fatal("the copy shares the original")
	}
}
