package recommender

import "testing"

func TestSignalNames(t *testing.T) {
	want := []string{"space", "recent", "task", "conversation", "history"}
	for i, w := range want {
		if got := Signal(i).String(); got != w {
			t.Errorf("Signal(%d) = %q, want %q", i, got, w)
		}
		if s, ok := ParseSignal(w); !ok || s != Signal(i) {
			t.Errorf("ParseSignal(%q) = %v %v", w, s, ok)
		}
	}
	if NumSignals != 5 || Signal(7).String() != "signal(7)" {
		t.Errorf("NumSignals %d, %q", NumSignals, Signal(7))
	}
	if Accepted.String() != "accepted" || Dismissed.String() != "dismissed" || Ignored.String() != "ignored" {
		t.Error("outcome names")
	}
}
