package selector

import (
	"reflect"
	"sort"
	"sync"
)

// catalogView is a caller's callable tools by name, with what is derived
// from them once per catalog rather than once per request (the tools that
// read a file into text). A Catalog that returns the very same list again
// (a fixed catalog, or one that caches its list until the registry
// changes) gets the same view; one that builds a new list per call gets a
// new view, as before. A Catalog must not change a list it returned.
type catalogView struct {
	list    []Entry
	entries map[string]Entry
	names   []string

	readersOnce sync.Once
	readers     []*toolShape
}

// views keeps the last few views built (several callers, several
// catalogs); an older one is rebuilt when asked for again.
var views struct {
	sync.Mutex
	last [8]*catalogView
	next int
}

// viewOf is the view of a Catalog's list.
func viewOf(callable []Entry) *catalogView {
	if len(callable) > 0 {
		views.Lock()
		for _, v := range views.last {
			if v != nil && len(v.list) == len(callable) && &v.list[0] == &callable[0] {
				views.Unlock()
				return v
			}
		}
		views.Unlock()
	}
	v := &catalogView{list: callable, entries: make(map[string]Entry, len(callable)), names: make([]string, 0, len(callable))}
	for _, e := range callable {
		if _, dup := v.entries[e.Tool.Name]; dup {
			continue // the catalog lists the preferred provider first
		}
		v.entries[e.Tool.Name] = e
		v.names = append(v.names, e.Tool.Name)
	}
	if len(callable) > 0 {
		views.Lock()
		views.last[views.next] = v
		views.next = (views.next + 1) % len(views.last)
		views.Unlock()
	}
	return v
}

// viewWith is the view whose entries are these (the map candidates
// returned), or nil.
func viewWith(entries map[string]Entry) *catalogView {
	if entries == nil {
		return nil
	}
	p := reflect.ValueOf(entries).UnsafePointer()
	views.Lock()
	defer views.Unlock()
	for _, v := range views.last {
		if v != nil && reflect.ValueOf(v.entries).UnsafePointer() == p {
			return v
		}
	}
	return nil
}

// readersOf are the tools among entries that read a file into text, by
// name.
func readersOf(entries map[string]Entry) []*toolShape {
	var out []*toolShape
	for _, e := range entries {
		if sh, err := shapeOf(e.Tool); err == nil && sh.isReader() {
			out = append(out, sh)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].t.Name < out[j].t.Name })
	return out
}

// fileReaders are the view's readers, found once.
func (v *catalogView) fileReaders() []*toolShape {
	v.readersOnce.Do(func() { v.readers = readersOf(v.entries) })
	return v.readers
}
