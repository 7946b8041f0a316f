package pipeline

import "testing"

// pending reports whether ch holds a signal, taking it.
func pending(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestRegistryWatchSignalsEveryChangeCoalesced(t *testing.T) {
	r := NewRegistry(RegistryConfig{})
	ch, stop := r.Watch()
	other, stopOther := r.Watch()
	defer stopOther()
	if pending(ch) {
		t.Fatal("a signal before any change")
	}
	if err := r.Register("p", tool("a"), echo); err != nil {
		t.Fatal(err)
	}
	if !pending(ch) || !pending(other) {
		t.Fatal("Register did not signal every watcher")
	}
	// Two changes before the reader looks: one signal, not two, and no
	// registration blocked on the full channel.
	if err := r.Register("p", tool("b"), echo); err != nil {
		t.Fatal(err)
	}
	r.Deregister("p", "a", "")
	if !pending(ch) || pending(ch) {
		t.Fatal("two changes should leave exactly one pending signal")
	}
	r.DeregisterProvider("p")
	if !pending(ch) {
		t.Fatal("DeregisterProvider did not signal")
	}
	r.Deregister("p", "nothing", "")
	if pending(ch) {
		t.Fatal("a removal that removed nothing signalled")
	}
	stop()
	stop() // twice is fine
	if err := r.Register("p", tool("c"), echo); err != nil {
		t.Fatal(err)
	}
	if pending(ch) {
		t.Fatal("a stopped watcher was signalled")
	}
	if !pending(other) {
		t.Fatal("stopping one watcher stopped the other")
	}
}
