package executor

import "testing"

func TestParseProcStatCountsFieldsFromTheLastParen(t *testing.T) {
	line := "1234 (my (odd) cmd) S 1 1234 1234 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 98765 1000000 250 18446744073709551615"
	st, err := parseProcStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != 'S' || st.Pgrp != 1234 || st.UTime != 7 || st.STime != 3 || st.StartTicks != 98765 || st.RSSPages != 250 {
		t.Fatalf("parsed %+v", st)
	}
	if _, err := parseProcStat("1 (x) S 1"); err == nil {
		t.Fatal("a short line must be an error")
	}
}
