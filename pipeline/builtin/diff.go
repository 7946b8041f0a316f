package builtin

// Line diff: Myers' O(ND) algorithm in its linear-space form (E. W. Myers,
// "An O(ND) Difference Algorithm and Its Variations", Algorithmica 1986,
// section 4b), the method of GNU diff, with GNU diff's two guards against
// its quadratic worst case (D, the size of the edit script, near N+M):
//
//   - Lines that occur in only one of the texts cannot be in any common
//     subsequence; they are marked deleted/inserted up front and the search
//     runs on the rest (GNU's discard_confusing_lines, its simple half). The
//     diff stays minimal. Two unrelated texts cost O(N+M) this way.
//   - A middle-snake search that reaches D = diffTooExpensive without
//     meeting stops and splits at the furthest point either direction
//     reached (GNU's "too expensive" heuristic): the script stays correct,
//     and is no longer guaranteed minimal only for such inputs.
//
// On top of these, the whole diff has a work budget (diffMaxWork diagonal
// and snake steps): once spent, the remaining unresolved blocks are
// reported as replaced. That bounds the time of any input of the sizes
// compare accepts (see TestBuiltinLimitsFitClass), and the work counter is
// also where the context is checked, so a cancelled or timed-out compare
// stops within microseconds instead of running on.
//
// Lines are interned to ints first so comparisons are integer compares.
// compareSeq strips the common prefix and suffix, finds the middle snake of
// an optimal edit path by running the greedy algorithm from both ends until
// the paths overlap, and recurses on the two halves; memory is O(N+M).

import (
	"context"
)

// OpKind is the kind of a diff operation.
type OpKind string

const (
	OpEqual  OpKind = "equal"
	OpDelete OpKind = "delete"
	OpInsert OpKind = "insert"
)

// DiffOp is a run of lines with the same fate: A[ALo:AHi] deleted,
// B[BLo:BHi] inserted, or A[ALo:AHi] == B[BLo:BHi].
type DiffOp struct {
	Kind     OpKind
	ALo, AHi int
	BLo, BHi int
}

const (
	// diffTooExpensive is the edit distance at which one middle-snake
	// search gives up on minimality (GNU diff uses 4096 or more; a lower
	// bound keeps a search over a 500 KB text to milliseconds).
	diffTooExpensive = 1024
	// diffMaxWork bounds the steps of a whole diff, so the costliest
	// compare fits its latency class under the race detector too
	// (TestBuiltinLimitsFitClass).
	diffMaxWork = 8_000_000
	// diffCheckEvery is how many steps pass between context checks.
	diffCheckEvery = 1 << 16
)

// DiffLines returns the edit script turning a into b, as maximal runs.
// Applying the script to a yields b exactly.
func DiffLines(a, b []string) []DiffOp {
	ops, _ := diffLines(context.Background(), a, b)
	return ops
}

// diffLines is DiffLines that stops with ctx.Err() when ctx ends.
func diffLines(ctx context.Context, a, b []string) ([]DiffOp, error) {
	ids := map[string]int{} // sized by growth: texts of few distinct lines are common
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ai, bi := intern(a), intern(b)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d := &differ{ctx: ctx, delA: make([]bool, len(a)), insB: make([]bool, len(b))}

	// Keep only the lines that occur on both sides; mark the others.
	inA, inB := make([]bool, len(ids)), make([]bool, len(ids))
	for _, id := range ai {
		inA[id] = true
	}
	for _, id := range bi {
		inB[id] = true
	}
	d.a, d.aIdx = make([]int, 0, len(ai)), make([]int, 0, len(ai))
	d.b, d.bIdx = make([]int, 0, len(bi)), make([]int, 0, len(bi))
	for i, id := range ai {
		if inB[id] {
			d.a, d.aIdx = append(d.a, id), append(d.aIdx, i)
		} else {
			d.delA[i] = true
		}
	}
	for j, id := range bi {
		if inA[id] {
			d.b, d.bIdx = append(d.b, id), append(d.bIdx, j)
		} else {
			d.insB[j] = true
		}
	}
	n := len(d.a) + len(d.b) + 2
	d.vf = make([]int, 2*n+1)
	d.vb = make([]int, 2*n+1)
	d.compareSeq(0, len(d.a), 0, len(d.b))
	if d.err != nil {
		return nil, d.err
	}
	return script(ai, bi, d.delA, d.insB), nil
}

type differ struct {
	ctx        context.Context
	a, b       []int // the lines kept (present on both sides), interned
	aIdx, bIdx []int // their indices in the full texts
	delA, insB []bool
	vf, vb     []int // indexed by diagonal + offset
	work       int   // steps so far
	nextCheck  int   // work at which ctx is checked next
	err        error // ctx.Err() once seen: everything unwinds
}

// spend counts n steps and reports whether the diff must stop refining:
// the context ended (d.err set) or the work budget is spent.
func (d *differ) spend(n int) bool {
	d.work += n
	if d.work >= d.nextCheck {
		d.nextCheck = d.work + diffCheckEvery
		if d.err == nil {
			d.err = stopped(d.ctx)
		}
	}
	return d.err != nil || d.work > diffMaxWork
}

// replace marks a[aLo:aHi] deleted and b[bLo:bHi] inserted.
func (d *differ) replace(aLo, aHi, bLo, bHi int) {
	for i := aLo; i < aHi; i++ {
		d.delA[d.aIdx[i]] = true
	}
	for j := bLo; j < bHi; j++ {
		d.insB[d.bIdx[j]] = true
	}
}

func (d *differ) compareSeq(aLo, aHi, bLo, bHi int) {
	if d.err != nil {
		return
	}
	start := aLo
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi--
		bHi--
	}
	if d.spend(aLo-start+1) && d.err != nil {
		return
	}
	switch {
	case aLo == aHi || bLo == bHi:
		d.replace(aLo, aHi, bLo, bHi)
		return
	case d.work > diffMaxWork:
		d.replace(aLo, aHi, bLo, bHi) // budget spent: no more search
		return
	}
	x, y, ok := d.middleSnake(aLo, aHi, bLo, bHi)
	if !ok || (x == aLo && y == bLo) || (x == aHi && y == bHi) {
		// Stopped (context, budget), or a split that would not make
		// progress (cannot happen for an optimal split of non-trivial
		// sequences; recursing on it would not terminate). Replacing the
		// block is still a correct, if not minimal, script.
		if d.err == nil {
			d.replace(aLo, aHi, bLo, bHi)
		}
		return
	}
	d.compareSeq(aLo, x, bLo, y)
	d.compareSeq(x, aHi, y, bHi)
}

// middleSnake returns a point (x, y) on an optimal edit path from
// (aLo, bLo) to (aHi, bHi), strictly between the two for D ≥ 2 — or, past
// diffTooExpensive, the furthest point reached; ok is false when the
// search stopped for the context or the budget.
// Coordinates inside are relative to (aLo, bLo); the forward V holds the
// furthest x on each diagonal k = x - y, the backward V the furthest
// distance walked back from the end on diagonal k' = (N-x) - (M-y).
func (d *differ) middleSnake(aLo, aHi, bLo, bHi int) (int, int, bool) {
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]
	N, M := len(a), len(b)
	delta := N - M
	odd := delta&1 != 0
	maxD := (N + M + 1) / 2
	off := N + M + 1
	vf, vb := d.vf, d.vb
	vf[off+1], vb[off+1] = 0, 0
	for D := 0; D <= maxD; D++ {
		steps := 0
		// forward D-paths
		for k := -D; k <= D; k += 2 {
			var x int
			if k == -D || (k != D && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1] // down: insertion
			} else {
				x = vf[off+k-1] + 1 // right: deletion
			}
			y := x - k
			x0 := x
			for x < N && y < M && a[x] == b[y] {
				x++
				y++
			}
			steps += 1 + x - x0
			vf[off+k] = x
			if odd {
				kb := delta - k
				if kb >= -(D-1) && kb <= D-1 && x+vb[off+kb] >= N {
					return aLo + x, bLo + y, true
				}
			}
		}
		// backward D-paths, on the reversed sequences
		for k := -D; k <= D; k += 2 {
			var x int
			if k == -D || (k != D && vb[off+k-1] < vb[off+k+1]) {
				x = vb[off+k+1]
			} else {
				x = vb[off+k-1] + 1
			}
			y := x - k
			x0 := x
			for x < N && y < M && a[N-1-x] == b[M-1-y] {
				x++
				y++
			}
			steps += 1 + x - x0
			vb[off+k] = x
			if !odd {
				kf := delta - k
				if kf >= -D && kf <= D && vf[off+kf]+x >= N {
					return aLo + N - x, bLo + M - y, true
				}
			}
		}
		if d.spend(steps) {
			return 0, 0, false
		}
		if D >= diffTooExpensive {
			x, y := furthest(vf, vb, off, D, N, M)
			return aLo + x, bLo + y, true
		}
	}
	return aLo, bLo, true // unreachable: the paths always meet by maxD
}

// furthest is GNU diff's "too expensive" split: of the D-paths from the
// start and from the end, the point that got furthest (in x+y walked),
// clamped to the box. Any split point gives a correct script; a far one
// keeps the recursion short.
func furthest(vf, vb []int, off, D, N, M int) (int, int) {
	clamp := func(x, k int) (int, int, bool) {
		x = min(x, N)
		y := x - k
		if y > M {
			x, y = M+k, M
		}
		return x, y, x >= 0 && y >= 0
	}
	bestF, fx, fy := -1, 0, 0
	bestB, bx, by := -1, 0, 0
	for k := max(-D, -M); k <= min(D, N); k++ {
		if (k-D)&1 != 0 {
			continue // only diagonals of D's parity hold D-paths
		}
		if x, y, ok := clamp(vf[off+k], k); ok && x+y > bestF {
			bestF, fx, fy = x+y, x, y
		}
		if x, y, ok := clamp(vb[off+k], k); ok && x+y > bestB {
			bestB, bx, by = x+y, x, y
		}
	}
	if bestF >= bestB {
		return fx, fy
	}
	return N - bx, M - by
}

// script turns the marks into maximal runs.
func script(a, b []int, delA, insB []bool) []DiffOp {
	var ops []DiffOp
	add := func(k OpKind, ai, aj, bi, bj int) {
		if n := len(ops); n > 0 && ops[n-1].Kind == k {
			ops[n-1].AHi, ops[n-1].BHi = aj, bj
			return
		}
		ops = append(ops, DiffOp{Kind: k, ALo: ai, AHi: aj, BLo: bi, BHi: bj})
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && delA[i]:
			add(OpDelete, i, i+1, j, j)
			i++
		case j < len(b) && insB[j]:
			add(OpInsert, i, i, j, j+1)
			j++
		default:
			add(OpEqual, i, i+1, j, j+1)
			i++
			j++
		}
	}
	return ops
}
