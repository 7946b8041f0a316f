package pipeline

import "sync"

// watchers are the registry's change subscribers (Watch). They live apart
// from Registry.mu so that a notification never waits on a reader.
type watchers struct {
	mu   sync.Mutex
	subs map[*chan struct{}]struct{}
}

// Watch returns a channel that receives after the set of registered tools
// changes (a registration, a replacement, a removal, a dead provider's
// deregistration), and a function that ends the subscription. Changes that
// come faster than the reader are coalesced into one: the channel holds at
// most one pending signal, so a slow reader never blocks a registration and
// always re-reads the registry after the last change it was told about.
// Channels such as MCP servers (notifications/tools/list_changed) use it to
// follow the registry without polling Generation.
func (r *Registry) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.watch.mu.Lock()
	if r.watch.subs == nil {
		r.watch.subs = map[*chan struct{}]struct{}{}
	}
	r.watch.subs[&ch] = struct{}{}
	r.watch.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			r.watch.mu.Lock()
			delete(r.watch.subs, &ch)
			r.watch.mu.Unlock()
		})
	}
}

// notify tells every watcher that the tool set changed, without blocking.
func (r *Registry) notify() {
	r.watch.mu.Lock()
	defer r.watch.mu.Unlock()
	for ch := range r.watch.subs {
		select {
		case *ch <- struct{}{}:
		default: // one signal is already pending: it covers this change too
		}
	}
}
