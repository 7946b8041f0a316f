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
// ReadSpace(downloads). A static capability_required cannot say that:
// ReadSpace(*) would demand the wildcard itself (a required "*" is covered
// only by a held "*", see pipeline.Capability.Covers), and any single space
// would be wrong for the others. So the space tools declare no static
// requirement and their handlers enforce ReadSpace(<space>) for the space
// named in each call, asking the AccessPolicy given to Register whether the
// calling agent (pipeline.Call.Caller, set by the channel, never by the
// request body) holds it. A caller without it gets *pipeline.ToolCapabilityDenied
// naming the missing capability, the same error the Manager's stage 3 gives.
// RequiredFor exposes the same rule, so a pipeline stage (or a selector
// filtering tools by capability) can apply it before dispatch.
package builtin
