// Package chains runs DAGs of tool calls: steps whose arguments reference
// the chain's input, earlier steps' outputs, or the current element of a
// foreach, executed in parallel through an Executor (the pipeline's Tool
// Manager) with a shared timeout budget, partial results on cancellation and
// a trace of every node.
//
// # Building a chain
//
// Three ways, one Chain type:
//
//   - Parse compiles the YAML pipeline DSL (see Parse for the format;
//     examples/ has two complete pipelines). Errors read
//     "file:line: step ID: message".
//   - ParsePlan compiles a model-emitted plan
//     {"steps":[{"id","function","arguments"}]}. Errors read
//     "plan: step ID: message".
//   - In Go: &Chain{Steps: []*Step{{ID: "a", Tool: "t", Params: MustTemplate(...)}}}.
//
// # References
//
// A string argument may hold references in double braces:
//
//	{{input.topic}}                       the chain's input "topic"
//	{{steps.search.output}}               step search's whole output
//	{{steps.search.output.documents[0]}}  a JSON path into it: .key, [n], ["odd key"]
//	{{steps.extract.output[*].text}}      [*] maps the rest of the path over an array
//	{{item}}, {{item.name}}               the current element, in a foreach step
//	{{steps.s.output[*].summary | join "\n\n"}}   join an array into one string
//
// A string that is exactly one reference is replaced by the referenced
// value with its JSON type (a number stays a number, an array an array). A
// reference inside a longer string is interpolated: strings as they are,
// other values as JSON. Write `\{{` for a literal "{{".
//
// Dependencies come from references (plus a step's optional needs:), so
// steps that do not reference each other run in parallel: a plan that
// does not invent dependencies gets its parallelism for free. A reference
// must name a step listed before the one that uses it (a "forward
// reference" is an error even without a cycle, so chains read top to
// bottom and a plan grammar can offer only earlier ids); needs: may point
// anywhere, and a cycle through needs and references is reported as such.
//
// # Validation
//
// Chain.Validate checks, before anything runs: structure (unique ids,
// references that resolve, {{item}} only under foreach, no cycles, no
// forward references), that each tool exists and the caller may call it
// (Catalog; RegistryCatalog adapts a pipeline.Registry and AccessPolicy),
// and static types: a literal argument must validate against its
// parameter's JSON Schema; a reference to a step whose tool declares a
// return_schema has the type found at its path there (and a path into a
// property the schema does not have is an error); an interpolated string can
// only fill a string parameter; required parameters must be present and
// unknown ones absent when the schema says so. Where a type is not knowable
// statically (no return_schema, anyOf, ...) the check is left to the
// Executor, which validates every call at run time anyway.
//
// # Running
//
// Run validates, then schedules each step as soon as its dependencies have
// finished, with at most Options.MaxParallel calls in flight. See Run for
// how the timeout budget is shared (each step gets what is left divided by
// the number of steps on the longest path from it to the end), the two
// failure policies, and cancellation (the Result then holds exactly the
// outputs of the steps that finished; Run returns only after every call it
// made has returned, leaving no goroutine behind).
//
// The Result's Trace has one NodeTrace per call (a foreach step has one per
// element plus a summary node) and one per skipped step, with start, end,
// outcome, latency, budget and error; Options.OnNode streams them as they
// end, for a UI or the eval recorder.
package chains
