package recommender

import "strconv"

// Signal names one source of evidence for a recommendation.
type Signal int

const (
	SignalSpace        Signal = iota // active space content (file events)
	SignalRecent                     // the caller's recent calls
	SignalTask                       // the task text
	SignalConversation               // the current chat's recent turns
	SignalHistory                    // sequence model learned from logs
	NumSignals
)

var signalNames = [NumSignals]string{"space", "recent", "task", "conversation", "history"}

// String is the signal's lower-case name: "space", "recent", "task",
// "conversation" or "history".
func (s Signal) String() string {
	if s < 0 || s >= NumSignals {
		return "signal(" + strconv.Itoa(int(s)) + ")"
	}
	return signalNames[s]
}

// ParseSignal is the inverse of String.
func ParseSignal(name string) (Signal, bool) {
	for i, n := range signalNames {
		if n == name {
			return Signal(i), true
		}
	}
	return 0, false
}

// Features is one candidate's score per signal, each in [0,1]; 0 says
// nothing (the signal has no evidence for the tool).
type Features [NumSignals]float64

// Outcome is the user's response to a recommendation.
type Outcome int

const (
	Accepted  Outcome = iota // the user took the recommendation
	Dismissed                // the user said no
	Ignored                  // shown, neither taken nor dismissed: a weak negative
)

// String is "accepted", "dismissed" or "ignored".
func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Dismissed:
		return "dismissed"
	case Ignored:
		return "ignored"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}
