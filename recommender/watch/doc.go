// Package watch is the recommender's file watcher: it watches the
// directories of AIRS's spaces (with fsnotify: inotify on Linux, kqueue on
// macOS and the BSDs, ReadDirectoryChangesW on Windows) and hands the
// recommender one debounced Event per changed file. Every resource it uses
// is bounded, and what happens at each bound is stated here.
//
// # Events
//
// Only regular files yield events; directories are watched, not reported.
// A create, write or open is delivered only if the path is, at delivery, a
// regular file that can be opened for reading; a remove or rename (the
// file left the path) is always delivered. Events for one path fold into
// one: it is delivered once the path has been quiet for Debounce (default
// 200ms), and at the latest 5×Debounce after its first event, so a file
// written without pause is still reported. The folded Op is the last one,
// except that a create stays a create through later writes and opens, and
// a write stays a write through opens. Deliver is called from one
// goroutine, never concurrently; while it runs, events keep being read
// and folded. Event.Path is under the space's root as configured; the
// watched directories are that root with its symbolic links resolved.
// When spaces nest or share a folder, a file is reported once, in the
// innermost space, with its names in the others in Event.Also.
//
// A directory created after Start is watched as it appears, and the files
// already in it by then are reported as created (they may have come before
// its watch did). Hidden files and directories and editors' temporary
// files are ignored (DefaultIgnore; Config.Ignore replaces it); an
// ignored directory is not watched at all. Touch injects an event (an
// "open" from the API, say) into the same debounce; it is not filtered by
// Ignore, and it refuses a path that leaves the space lexically ("../x",
// an absolute path elsewhere) or through a symbolic link.
//
// # Limits
//
//   - Symbolic links are never followed: a link to a directory is not
//     watched, so a link loop (a directory linked to its parent) costs
//     nothing; a link to a file yields no events. Only a space's root is
//     resolved, once, at Start (and Touch resolves the path it is given, to
//     check where it leads, and reports the file it leads to).
//   - MaxDirs (default 4096): directories watched in all spaces together.
//     Start walks the spaces breadth first, so the levels nearest the roots
//     are watched first; the directories left over are not watched, nor
//     read (so a huge tree costs at most MaxDirs directory reads), each one
//     met is counted in Stats.DirsSkipped and Stats.Limited is set. A new
//     directory beyond the limit is likewise skipped; a watched directory
//     that goes away frees its slot. The rest keeps working.
//   - MaxDepth (default 8): directory levels watched below a root (the
//     root is level 0); deeper directories are skipped and counted in
//     DirsSkipped (Limited is not set for depth).
//   - MaxPending (default 1024): paths waiting out their debounce. Memory
//     is bounded by it; an event for a new path beyond it is dropped and
//     counted in Stats.Dropped (Touch returns ErrPendingFull). Events for
//     paths already pending still fold in. In a flood, deliveries are far
//     fewer than raw events: at most one per path per Debounce.
//   - The OS's watch limit: on Linux each watched directory takes one
//     inotify watch of fs.inotify.max_user_watches, shared by all of the
//     user's processes. When the kernel refuses a watch (ENOSPC, or
//     EMFILE on kqueue, where the open-file limit applies), the watcher
//     stops adding watches, sets Limited, counts the directory in
//     DirsSkipped and says in Stats.LastError what happened and the sysctl
//     to raise (sysctl fs.inotify.max_user_watches=524288); what is watched
//     keeps being delivered; a slot freed by a watched directory that goes
//     away is used again. On macOS (kqueue) every watched directory and
//     every file in it holds a file descriptor, so there the open-file
//     limit (ulimit -n) is the OS limit, met the same way. If the OS cannot
//     give an inotify instance at all (fs.inotify.max_user_instances),
//     Start fails saying so.
//   - The OS's event queue (fs.inotify.max_queued_events, 16384 by
//     default): fsnotify's channels are always drained, by a goroutine
//     that does no more than a map update per event (and an lstat per
//     created path; about 1.5µs an event), never waiting for deliver. The
//     queue overflows only when files change faster than that (this
//     package's flood test, some 100,000 writes a second under the race
//     detector, sees it); the events lost are lost, and the overflow is
//     counted in Stats.Errors with the sysctl in LastError.
//   - A space's root that is removed or moved away is no longer watched,
//     even if it comes back; a new Start watches it again.
//   - Unreadable directories (and files) are counted in Stats.Errors, with
//     the path in LastError, and skipped (a directory that cannot be
//     watched or read, a file created, written or opened that cannot be
//     opened for reading: no event); they never stop the watcher. A space
//     whose root is missing at Start is counted the same way and not
//     watched. A deliver that panics is counted too, and the watcher goes
//     on.
//   - Close stops every goroutine before it returns (it waits for a
//     deliver call in progress, so deliver must not call Close); pending
//     events are discarded. Ending Start's context closes the watcher too.
package watch
