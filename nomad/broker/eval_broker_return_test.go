package broker

import "testing"

// An eval returned by its lease holder (it never reached the worker) is
// ready again at once, with no nack delay, and the lease does not count
// as a delivery; the token it was leased under is spent.
func TestAReturnedEvalIsReadyAtOnceAndNotADelivery(t *testing.T) {
	b, _ := newTestBroker(t)
	b.cfg.DeliveryLimit = 2
	e := testEval("web", 50, 1)
	b.Enqueue(e)

	for i := 0; i < 3; i++ {
		got, tok := tryDequeue(t, b)
		if got == nil || got.ID != e.ID {
			t.Fatalf("return %d: dequeue got %v, want the eval ready at once", i, got)
		}
		if err := b.Return(got.ID, tok); err != nil {
			t.Fatal(err)
		}
		if err := b.Ack(got.ID, tok); err == nil {
			t.Fatal("the returned lease's token still acks")
		}
	}
	// Three returns, then one real delivery that fails: under a delivery
	// limit of two it is nacked, not failed.
	got, tok := tryDequeue(t, b)
	if err := b.Nack(got.ID, tok); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.TotalFailed != 0 {
		t.Fatalf("returns counted as deliveries: %+v", st)
	}
}
