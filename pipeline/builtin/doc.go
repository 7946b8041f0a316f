// Package builtin holds the tools that ship inside AIRS: calculator,
// list-files, read-file, pdf-extract, compare and summarize.
//
// Each tool is a pipeline.Tool (the registry's description: a strict JSON
// Schema 2020-12 for its parameters and its result, the capabilities it
// needs, trust TL3, a latency class, whether it is idempotent) plus a
// pipeline.Handler. Register puts all of them into a Manager under the
// provider id "builtin".
//
// # Spaces and capabilities
//
// The file tools work inside named spaces: a space is a directory the user
// configures (spaces: {documents: ~/Documents}). Every path a caller gives is
// relative to its space. Paths never leave the space: absolute paths and any
// ".." element are refused before the file system is touched, and the file
// system is then only reached through an os.Root opened on the space's
// directory, so a symbolic link that resolves outside the space fails too
// (os.Root checks every component, including links, at open time, which
// leaves no check-then-use window).
//
// The capability a space tool needs depends on an argument: listing
// "documents" needs ReadSpace(documents), listing "downloads" needs
// ReadSpace(downloads). The space tools declare ReadSpace($space), which the
// Manager's stage 3 binds to the call's "space" argument
// (pipeline.Capability.Bind), and the selector's catalog narrows the
// "space" enum to the spaces the caller may read, so a space it cannot read
// never reaches the prompt or the grammar. The handlers check the same rule
// again through the AccessPolicy given to Register (defence in depth: a
// manifest may bind a builtin handler under another name without the
// requirement); RequiredFor exposes it.
package builtin
