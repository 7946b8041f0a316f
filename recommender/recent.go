package recommender

import "math"

// RecentWindow is how many of the caller's last calls RecentScores looks at.
const RecentWindow = 8

// recentDecay is the weight lost per call of age: the last call scores 1,
// the one before 0.6, then 0.36 …
const recentDecay = 0.6

// RecentScores is the recent-actions signal: for each tool among the
// caller's last RecentWindow calls (prev, oldest first), a score in [0,1]
// that is 1 for the last call and falls geometrically with age; a tool
// called several times adds up (capped at 1). Whether a recent call makes a
// tool more likely (the user repeats) or less (it is done) is for Fusion to
// learn: its weight may be negative.
func RecentScores(prev []string) map[string]float64 {
	out := make(map[string]float64, min(len(prev), RecentWindow))
	w := 1.0
	for i := len(prev) - 1; i >= 0 && i >= len(prev)-RecentWindow; i-- {
		out[prev[i]] = math.Min(1, out[prev[i]]+w)
		w *= recentDecay
	}
	return out
}
