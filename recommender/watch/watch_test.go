package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A file created in a space is delivered once, after the debounce, well
// under 2 s; so is one in a directory created after Start, written at
// once (before its watch can exist) and later.
func TestCreateDelivered(t *testing.T) {
	root := realTemp(t)
	w, s := startT(t, Config{Spaces: map[string]string{"docs": root}, Debounce: 100 * time.Millisecond}, hooks{})

	writeFile(t, filepath.Join(root, "a.txt"), "hello")
	ev, took := s.waitRel(t, "a.txt", 2*time.Second)
	if ev.Space != "docs" || ev.Op != OpCreate || ev.Path != filepath.Join(root, "a.txt") || ev.At.IsZero() {
		t.Errorf("event %+v", ev)
	}
	if took < 90*time.Millisecond || took > time.Second {
		t.Errorf("delivered after %v; want the debounce (100ms), well under 2s", took)
	}

	// A new subdirectory, a file in it at once (the watch is not there yet)
	// and a deeper one.
	sub := filepath.Join(root, "new", "deeper")
	mkdir(t, sub)
	writeFile(t, filepath.Join(sub, "early.txt"), "x")
	s.waitRel(t, filepath.Join("new", "deeper", "early.txt"), 2*time.Second)
	time.Sleep(150 * time.Millisecond) // the watch of new/deeper is in place by now
	writeFile(t, filepath.Join(root, "new", "late.txt"), "y")
	s.waitRel(t, filepath.Join("new", "late.txt"), 2*time.Second)

	s.settle(300*time.Millisecond, 3*time.Second)
	for _, rel := range []string{"a.txt", filepath.Join("new", "deeper", "early.txt"), filepath.Join("new", "late.txt")} {
		if got := s.matching(rel); len(got) != 1 {
			t.Errorf("%s: %d events, want 1: %v", rel, len(got), got)
		}
	}
	for _, e := range s.all() {
		if e.Rel == "new" || e.Rel == filepath.Join("new", "deeper") {
			t.Errorf("a directory was reported: %+v", e)
		}
	}
	if st := w.Stats(); st.Dirs != 3 || st.Errors != 0 || st.Delivered != 3 {
		t.Errorf("stats %+v; want 3 dirs, 3 delivered, no errors", st)
	}
}

// Writes within the window fold into the create; a later remove and a
// rename are delivered as such; a renamed directory is watched under its
// new name, and its old watches are gone.
func TestFoldRemoveRename(t *testing.T) {
	root := realTemp(t)
	mkdir(t, filepath.Join(root, "d", "e"))
	w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 80 * time.Millisecond}, hooks{})

	p := filepath.Join(root, "f.txt")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		f.WriteString("more ")
	}
	f.Close()
	s.settle(250*time.Millisecond, 3*time.Second)
	if got := s.matching("f.txt"); len(got) != 1 || got[0].Op != OpCreate {
		t.Fatalf("create + 20 writes: %v; want one create", got)
	}

	os.Rename(p, filepath.Join(root, "g.txt"))
	s.waitRel(t, "g.txt", 2*time.Second)
	s.settle(250*time.Millisecond, 3*time.Second)
	if got := s.matching("f.txt"); len(got) != 2 || got[1].Op != OpRename {
		t.Errorf("after the rename: %v; want create then rename", got)
	}
	if got := s.matching("g.txt"); len(got) != 1 || got[0].Op != OpCreate {
		t.Errorf("the rename's target: %v; want a create", got)
	}
	os.Remove(filepath.Join(root, "g.txt"))
	s.settle(250*time.Millisecond, 3*time.Second)
	if got := s.matching("g.txt"); len(got) != 2 || got[1].Op != OpRemove {
		t.Errorf("after the remove: %v; want create then remove", got)
	}

	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "d2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	writeFile(t, filepath.Join(root, "d2", "e", "x.txt"), "x")
	ev, _ := s.waitRel(t, filepath.Join("d2", "e", "x.txt"), 2*time.Second)
	if ev.Path != filepath.Join(root, "d2", "e", "x.txt") {
		t.Errorf("event in the moved directory: %+v", ev)
	}
	s.settle(250*time.Millisecond, 3*time.Second)
	for _, e := range s.all() {
		if strings.HasPrefix(e.Rel, "d"+string(filepath.Separator)) || e.Rel == "d" || e.Rel == "d2" {
			t.Errorf("an event under the old name, or for a directory: %+v", e)
		}
	}
	w.mu.Lock()
	_, old := w.dirs[filepath.Join(root, "d", "e")]
	n := len(w.dirs)
	w.mu.Unlock()
	if old || n != 3 {
		t.Errorf("watched dirs: %d (old d/e still there: %v); want root, d2, d2/e", n, old)
	}
}

func TestFold(t *testing.T) {
	for _, c := range []struct{ old, new, want Op }{
		{OpCreate, OpWrite, OpCreate}, {OpCreate, OpOpen, OpCreate}, {OpWrite, OpOpen, OpWrite},
		{OpOpen, OpWrite, OpWrite}, {OpCreate, OpRemove, OpRemove}, {OpRemove, OpCreate, OpCreate},
		{OpWrite, OpRename, OpRename},
	} {
		if got := fold(c.old, c.new); got != c.want {
			t.Errorf("fold(%s, %s) = %s, want %s", c.old, c.new, got, c.want)
		}
	}
}

// A file written without pause is still reported, at most 5×Debounce
// after its first event.
func TestContinuousWritesStillDelivered(t *testing.T) {
	root := realTemp(t)
	p := filepath.Join(root, "log.txt")
	writeFile(t, p, "")
	_, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond}, hooks{})
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	end := time.Now().Add(800 * time.Millisecond)
	for time.Now().Before(end) {
		f.WriteString("x")
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.matching("log.txt"); len(got) < 2 || len(got) > 6 {
		t.Errorf("800ms of writes every 5ms with a 50ms debounce: %d events, want 2..6 (one per ≤250ms)", len(got))
	}
}

// Hidden files and directories and editor temporary files are ignored;
// a hidden directory is not even watched.
func TestIgnore(t *testing.T) {
	for rel, want := range map[string]bool{
		"a.txt": false, "dir/b.pdf": false, ".git": true, ".git/config": true, "a/.hidden/b": true,
		"notes.txt~": true, "#notes.txt#": true, "~$report.docx": true, "4913": true, "x.swp": true,
		"dl.part": true, "dl.crdownload": true, "a.tmp": true, "#": false, "a#b": false, "tmp": false,
	} {
		if got := DefaultIgnore(filepath.FromSlash(rel)); got != want {
			t.Errorf("DefaultIgnore(%q) = %v", rel, got)
		}
	}

	root := realTemp(t)
	mkdir(t, filepath.Join(root, ".git", "objects"))
	w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond}, hooks{})
	if st := w.Stats(); st.Dirs != 1 {
		t.Errorf("dirs %d: .git was watched", st.Dirs)
	}
	writeFile(t, filepath.Join(root, ".hidden"), "x")
	writeFile(t, filepath.Join(root, "draft.txt~"), "x")
	writeFile(t, filepath.Join(root, ".git", "objects", "o"), "x")
	writeFile(t, filepath.Join(root, "seen.txt"), "x")
	s.waitRel(t, "seen.txt", 2*time.Second)
	s.settle(150*time.Millisecond, 2*time.Second)
	if got := s.all(); len(got) != 1 {
		t.Errorf("events %v; want only seen.txt", got)
	}

	// A Config's Ignore replaces the default.
	root2 := realTemp(t)
	_, s2 := startT(t, Config{Spaces: map[string]string{"s": root2}, Debounce: 50 * time.Millisecond,
		Ignore: func(rel string) bool { return strings.HasSuffix(rel, ".log") }}, hooks{})
	writeFile(t, filepath.Join(root2, "x.log"), "x")
	writeFile(t, filepath.Join(root2, ".shown"), "x")
	s2.waitRel(t, ".shown", 2*time.Second)
	s2.settle(150*time.Millisecond, 2*time.Second)
	if got := s2.all(); len(got) != 1 {
		t.Errorf("events %v; want only .shown", got)
	}
}

// Directories deeper than MaxDepth are not watched, and are counted.
func TestMaxDepth(t *testing.T) {
	root := realTemp(t)
	mkdir(t, filepath.Join(root, "a", "b", "c"))
	w, s := startT(t, Config{Spaces: map[string]string{"s": root}, MaxDepth: 1, Debounce: 50 * time.Millisecond}, hooks{})
	if st := w.Stats(); st.Dirs != 2 || st.DirsSkipped != 1 || st.Limited {
		t.Errorf("stats %+v; want 2 dirs (root, a), 1 skipped, not Limited", st)
	}
	writeFile(t, filepath.Join(root, "a", "b", "deep.txt"), "x")
	mkdir(t, filepath.Join(root, "a", "new"))
	writeFile(t, filepath.Join(root, "a", "ok.txt"), "x")
	s.waitRel(t, filepath.Join("a", "ok.txt"), 2*time.Second)
	s.settle(150*time.Millisecond, 2*time.Second)
	if got := s.all(); len(got) != 1 {
		t.Errorf("events %v; want only a/ok.txt", got)
	}
	if st := w.Stats(); st.Dirs != 2 || st.DirsSkipped != 2 {
		t.Errorf("stats %+v; a/new (level 2) should be skipped too", st)
	}
}

// Symbolic links are not followed: a directory linked to its parent (and
// to itself) costs one directory entry, and Start returns.
func TestSymlinkLoop(t *testing.T) {
	root := realTemp(t)
	outside := realTemp(t)
	mkdir(t, filepath.Join(root, "a"))
	for link, target := range map[string]string{
		filepath.Join(root, "a", "up"):      "..",
		filepath.Join(root, "a", "self"):    ".",
		filepath.Join(root, "a", "abs"):     root,
		filepath.Join(root, "out"):          outside,
		filepath.Join(root, "a", "file.ln"): filepath.Join(outside, "f"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var w *Watcher
	var s *sink
	go func() {
		defer close(done)
		w, s = startT(t, Config{Spaces: map[string]string{"s": root}, MaxDepth: 64, Debounce: 50 * time.Millisecond}, hooks{})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return: it followed a link loop")
	}
	if st := w.Stats(); st.Dirs != 2 || st.DirsSkipped != 0 {
		t.Errorf("stats %+v; want root and a watched, the links not", st)
	}
	writeFile(t, filepath.Join(outside, "f"), "outside") // through out/ and a/file.ln
	writeFile(t, filepath.Join(root, "a", "up", "via-link.txt"), "x")
	s.waitRel(t, "via-link.txt", 2*time.Second)
	s.settle(150*time.Millisecond, 2*time.Second)
	if got := s.all(); len(got) != 1 || got[0].Rel != "via-link.txt" {
		t.Errorf("events %v; want one, for via-link.txt under its real path", got)
	}
}

// Touch injects an open; paths that leave the space are refused.
func TestTouch(t *testing.T) {
	root := realTemp(t)
	outside := realTemp(t)
	mkdir(t, filepath.Join(root, "d"))
	writeFile(t, filepath.Join(root, "d", "doc.txt"), "x")
	writeFile(t, filepath.Join(outside, "secret.txt"), "x")
	os.Symlink(outside, filepath.Join(root, "escape"))
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "secret.ln"))
	os.Symlink("d", filepath.Join(root, "inner"))
	w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond}, hooks{})

	if err := w.Touch("s", filepath.Join("d", "doc.txt"), OpOpen); err != nil {
		t.Fatal(err)
	}
	ev, _ := s.waitRel(t, filepath.Join("d", "doc.txt"), 2*time.Second)
	if ev.Op != OpOpen || ev.Space != "s" {
		t.Errorf("event %+v", ev)
	}
	// An absolute path inside, and a link that stays inside (reported
	// under its real path).
	if err := w.Touch("s", filepath.Join(root, "inner", "doc.txt"), OpWrite); err != nil {
		t.Errorf("a link inside the space: %v", err)
	}
	if err := w.Touch("s", "later/new.txt", OpRemove); err != nil {
		t.Errorf("a path that does not exist yet: %v", err)
	}

	for _, c := range []struct {
		space, rel string
		op         Op
		want       string
	}{
		{"s", "../x", OpOpen, "leaves space"},
		{"s", "d/../../x", OpOpen, "leaves space"},
		{"s", filepath.Join(outside, "secret.txt"), OpOpen, "outside space"},
		{"s", filepath.Join("escape", "secret.txt"), OpOpen, "symbolic link"},
		{"s", "secret.ln", OpOpen, "symbolic link"},
		{"s", "escape/new.txt", OpCreate, "symbolic link"},
		{"s", ".", OpOpen, "root"},
		{"s", "d/doc.txt", Op("read"), "unknown op"},
		{"nope", "d/doc.txt", OpOpen, "unknown space"},
	} {
		err := w.Touch(c.space, c.rel, c.op)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Touch(%q, %q, %q) = %v; want an error saying %q", c.space, c.rel, c.op, err, c.want)
		}
	}
	s.settle(150*time.Millisecond, 2*time.Second)
	if got := s.matching(filepath.Join("d", "doc.txt")); len(got) != 2 || got[1].Op != OpWrite {
		t.Errorf("doc.txt events %v; want open, then write (through the inner link)", got)
	}
	if got := s.matching(filepath.Join("later", "new.txt")); len(got) != 1 || got[0].Op != OpRemove {
		t.Errorf("later/new.txt events %v; want a remove", got)
	}
	for _, e := range s.all() {
		if strings.Contains(e.Path, outside) || strings.Contains(e.Rel, "secret") {
			t.Errorf("an event outside the space: %+v", e)
		}
	}

	w.Close()
	if err := w.Touch("s", "d/doc.txt", OpOpen); !errors.Is(err, ErrClosed) {
		t.Errorf("Touch after Close = %v", err)
	}
}

// A Touch beyond MaxPending is refused with ErrPendingFull and counted.
func TestTouchPendingFull(t *testing.T) {
	root := realTemp(t)
	w, _ := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: time.Hour, MaxPending: 2}, hooks{})
	for i, want := range []error{nil, nil, nil, ErrPendingFull} {
		rel := []string{"a", "b", "a", "c"}[i]
		if err := w.Touch("s", rel, OpOpen); !errors.Is(err, want) {
			t.Errorf("Touch %d (%s) = %v, want %v", i, rel, err, want)
		}
	}
	if st := w.Stats(); st.Pending != 2 || st.Dropped != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Ending Start's context closes the watcher.
func TestContextEnds(t *testing.T) {
	before := countGoroutines()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Start(ctx, Config{Spaces: map[string]string{"s": realTemp(t)}}, func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	goroutinesBack(t, before)
	if err := w.Touch("s", "x", OpOpen); !errors.Is(err, ErrClosed) {
		t.Errorf("Touch after the context ended = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close after the context ended: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Config{Spaces: map[string]string{"s": realTemp(t)}}, func(Event) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with an ended context = %v", err)
	}
	goroutinesBack(t, before)
}

// A missing root is counted, not fatal; the other spaces work.
func TestMissingRoot(t *testing.T) {
	root := realTemp(t)
	w, s := startT(t, Config{Spaces: map[string]string{"gone": filepath.Join(root, "nope"), "ok": root}, Debounce: 50 * time.Millisecond}, hooks{})
	st := w.Stats()
	if st.Errors != 1 || !strings.Contains(st.LastError, "space gone") || st.Dirs != 1 {
		t.Errorf("stats %+v", st)
	}
	writeFile(t, filepath.Join(root, "a"), "x")
	s.waitRel(t, "a", 2*time.Second)
	if _, err := Start(context.Background(), Config{Spaces: map[string]string{"": root}}, func(Event) {}); err == nil {
		t.Error("an empty space name was accepted")
	}
	if _, err := Start(context.Background(), Config{}, nil); err == nil {
		t.Error("a nil deliver was accepted")
	}
}

// Nested spaces: a file belongs to the innermost one, and is named in the
// outer one too (Also), once.
func TestNestedSpaces(t *testing.T) {
	root := realTemp(t)
	inner := filepath.Join(root, "proj")
	mkdir(t, filepath.Join(inner, "src"))
	w, s := startT(t, Config{Spaces: map[string]string{"documents": root, "cwd": inner}, Debounce: 50 * time.Millisecond}, hooks{})
	if st := w.Stats(); st.Dirs != 3 {
		t.Errorf("dirs %d, want 3", st.Dirs)
	}
	writeFile(t, filepath.Join(inner, "src", "main.go"), "x")
	writeFile(t, filepath.Join(root, "top.txt"), "x")
	ev, _ := s.waitRel(t, filepath.Join("src", "main.go"), 2*time.Second)
	if ev.Space != "cwd" {
		t.Errorf("%+v; want space cwd", ev)
	}
	outer := Alias{Space: "documents", Path: filepath.Join(root, "proj", "src", "main.go"), Rel: filepath.Join("proj", "src", "main.go")}
	if len(ev.Also) != 1 || ev.Also[0] != outer {
		t.Errorf("Also %+v; want [%+v]", ev.Also, outer)
	}
	if ev, _ := s.waitRel(t, "top.txt", 2*time.Second); ev.Space != "documents" || len(ev.Also) != 0 {
		t.Errorf("%+v; want space documents, in no other", ev)
	}
	s.settle(100*time.Millisecond, 2*time.Second)
	if n := len(s.all()); n != 2 {
		t.Errorf("%d events for 2 files: %v", n, s.all())
	}
}

// Two spaces on one folder: a file is one event, in the first space by
// name, with its name in the other.
func TestSpacesSharingAFolder(t *testing.T) {
	root := realTemp(t)
	_, s := startT(t, Config{Spaces: map[string]string{"documents": root, "docs": root}, Debounce: 50 * time.Millisecond}, hooks{})
	writeFile(t, filepath.Join(root, "a.pdf"), "x")
	ev, _ := s.waitRel(t, "a.pdf", 2*time.Second)
	other := Alias{Space: "documents", Path: filepath.Join(root, "a.pdf"), Rel: "a.pdf"}
	if ev.Space != "docs" || len(ev.Also) != 1 || ev.Also[0] != other {
		t.Errorf("%+v; want space docs, also %+v", ev, other)
	}
}

// A space whose root is a symbolic link: the resolved root is watched,
// events are reported under the root as configured.
func TestSymlinkedRoot(t *testing.T) {
	real := realTemp(t)
	link := filepath.Join(realTemp(t), "Documents")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	w, s := startT(t, Config{Spaces: map[string]string{"documents": link}, Debounce: 50 * time.Millisecond}, hooks{})
	writeFile(t, filepath.Join(real, "a.txt"), "x")
	ev, _ := s.waitRel(t, "a.txt", 2*time.Second)
	if ev.Path != filepath.Join(link, "a.txt") {
		t.Errorf("Path %s; want it under the configured root %s", ev.Path, link)
	}
	if err := w.Touch("documents", filepath.Join(link, "a.txt"), OpOpen); err != nil {
		t.Errorf("Touch with the configured root: %v", err)
	}
	if err := w.Touch("documents", filepath.Join(real, "a.txt"), OpOpen); err != nil {
		t.Errorf("Touch with the resolved root: %v", err)
	}
}

// A panicking deliver is counted in Errors; the watcher goes on.
func TestDeliverPanics(t *testing.T) {
	root := realTemp(t)
	calls := make(chan string, 10)
	w, err := start(t.Context(), Config{Spaces: map[string]string{"s": root}, Debounce: 30 * time.Millisecond}, func(e Event) {
		calls <- e.Rel
		if e.Rel == "boom" {
			panic("boom")
		}
	}, hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeFile(t, filepath.Join(root, "boom"), "x")
	if got := <-calls; got != "boom" {
		t.Fatal(got)
	}
	writeFile(t, filepath.Join(root, "after"), "x")
	select {
	case got := <-calls:
		if got != "after" {
			t.Errorf("got %s", got)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("nothing delivered after the panic")
	}
	if st := w.Stats(); st.Errors != 1 || !strings.Contains(st.LastError, "deliver panicked: boom") {
		t.Errorf("stats %+v", st)
	}
}
