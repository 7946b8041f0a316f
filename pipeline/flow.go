package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airs-dev/airs/provenance"
)

// FlowRule is one flow policy: values whose labels are From may not reach
// the Args of tools of class To — the call is held for a person (Action
// hold), refused (deny), or let through (allow, to make an exception
// ahead of a broader rule).
type FlowRule struct {
	Name string
	// From are label kinds ("space", "mcp", "network", "tool", "user") or
	// "untrusted" (any label that is not trusted).
	From []string
	// To are tool classes ("read", "write", "send", "destructive"); empty:
	// every class.
	To []ToolClass
	// Args are argument roles ("target", "body") or argument names;
	// empty: every argument.
	Args []string
	// Action is FlowHold (the default), FlowDeny or FlowAllow.
	Action string
	// SameSpace exempts a value whose every label is a file of the very
	// space the call works in (its "space" argument): picking a file from
	// a listing of the folder the task is in is navigation, not a flow
	// out of it.
	SameSpace bool
}

// Flow actions.
const (
	FlowHold  = "hold"
	FlowDeny  = "deny"
	FlowAllow = "allow"
)

// DefaultFlows are the flow policies when none are configured:
//
//   - no-exfiltration: nothing read from a space, an MCP server or the
//     network becomes the URL or the body of a send tool;
//   - untrusted-target: no untrusted value picks the target of a
//     destructive, write or send tool;
//   - untrusted-read-elsewhere: no untrusted value picks the target of a
//     read in another space than the one it came from.
//
// Each holds the call for a person, who sees the flow.
func DefaultFlows() []FlowRule {
	return []FlowRule{
		{Name: "no-exfiltration", From: []string{"space", "mcp", "network"}, To: []ToolClass{ClassSend},
			Args: []string{"target", "body"}, Action: FlowHold},
		{Name: "untrusted-target", From: []string{"untrusted"}, To: []ToolClass{ClassDestructive, ClassWrite, ClassSend},
			Args: []string{"target"}, Action: FlowHold},
		{Name: "untrusted-read-elsewhere", From: []string{"untrusted"}, To: []ToolClass{ClassRead},
			Args: []string{"target"}, Action: FlowHold, SameSpace: true},
	}
}

// ValidateFlows checks rules as configuration: known kinds, classes,
// actions.
func ValidateFlows(rules []FlowRule) error {
	kinds := []string{"untrusted", string(provenance.User), string(provenance.Space), string(provenance.MCP),
		string(provenance.Network), string(provenance.Tool)}
	classes := []ToolClass{ClassRead, ClassWrite, ClassSend, ClassDestructive}
	for i, r := range rules {
		name := r.Name
		if name == "" {
			name = fmt.Sprintf("#%d", i+1)
		}
		if len(r.From) == 0 {
			return fmt.Errorf("flow %s: from is empty: name the label kinds it applies to (%s)", name, strings.Join(kinds, ", "))
		}
		for _, k := range r.From {
			if !slices.Contains(kinds, k) {
				return fmt.Errorf("flow %s: from %q: want one of %s", name, k, strings.Join(kinds, ", "))
			}
		}
		for _, c := range r.To {
			if !slices.Contains(classes, c) {
				return fmt.Errorf("flow %s: to %q: want read, write, send or destructive", name, c)
			}
		}
		switch r.Action {
		case "", FlowHold, FlowDeny, FlowAllow:
		default:
			return fmt.Errorf("flow %s: action %q: want hold, deny or allow", name, r.Action)
		}
	}
	return nil
}

// checkFlows finds the first rule a call's arguments break: the rule, the
// argument and the labels that matched it (nil when none did, or when an
// allow rule matched first).
func (l *Level2) checkFlows(in level2Input, class ToolClass, args provenance.Args) (*FlowRule, string, provenance.Set) {
	if len(args) == 0 {
		return nil, "", nil
	}
	names := make([]string, 0, len(args))
	for n := range args {
		names = append(names, n)
	}
	sort.Strings(names) // the same call always reports the same flow
	space := ""
	if m, ok := in.params.(map[string]any); ok {
		space, _ = m["space"].(string)
	}
	for _, name := range names {
		labels := args[name]
		for i := range l.flows {
			r := &l.flows[i]
			if len(r.To) > 0 && !slices.Contains(r.To, class) {
				continue
			}
			if !l.argMatches(r.Args, name) {
				continue
			}
			from := matchFrom(r.From, labels)
			if len(from) == 0 {
				continue
			}
			if r.SameSpace && space != "" && allInSpace(from, space) {
				continue
			}
			if r.Action == FlowAllow {
				break
			}
			return r, name, from
		}
	}
	return nil, "", nil
}

func (l *Level2) argMatches(roles []string, name string) bool {
	if len(roles) == 0 {
		return true
	}
	n := strings.ToLower(name)
	for _, r := range roles {
		switch r {
		case "target":
			if l.targets[n] {
				return true
			}
		case "body":
			if l.bodies[n] {
				return true
			}
		default:
			if strings.EqualFold(r, name) {
				return true
			}
		}
	}
	return false
}

func matchFrom(from []string, labels provenance.Set) provenance.Set {
	var out provenance.Set
	for _, lb := range labels {
		for _, f := range from {
			if (f == "untrusted" && !lb.Trusted) || f == string(lb.Kind) {
				out = append(out, lb)
				break
			}
		}
	}
	return out
}

func allInSpace(labels provenance.Set, space string) bool {
	for _, lb := range labels {
		if lb.Kind != provenance.Space || !strings.HasPrefix(lb.Source, space+"/") {
			return false
		}
	}
	return true
}

// flowReason is the question a person is asked: "delete-file path came
// from the text of documents/invoice.pdf (flow policy untrusted-target)".
func flowReason(tool, arg string, from provenance.Set, r *FlowRule) string {
	return fmt.Sprintf("%s %s came from %s (flow policy %s)", tool, arg, from.Describe(), r.Name)
}
