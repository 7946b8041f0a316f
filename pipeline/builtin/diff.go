package builtin

// Line diff: Myers' O(ND) algorithm in its linear-space form (E. W. Myers,
// "An O(ND) Difference Algorithm and Its Variations", Algorithmica 1986,
// section 4b), the method of GNU diff. Lines are interned to ints first so
// comparisons are integer compares. compareSeq strips the common prefix and
// suffix, finds the middle snake of an optimal edit path by running the
// greedy algorithm from both ends until the paths overlap, and recurses on
// the two halves; memory is O(N+M).

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

// DiffLines returns the edit script turning a into b, as maximal runs.
// Applying the script to a yields b exactly.
func DiffLines(a, b []string) []DiffOp {
	ids := make(map[string]int, len(a)+len(b))
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
	d := &differ{a: intern(a), b: intern(b)}
	d.delA = make([]bool, len(a))
	d.insB = make([]bool, len(b))
	n := len(a) + len(b) + 2
	d.vf = make([]int, 2*n+1)
	d.vb = make([]int, 2*n+1)
	d.compareSeq(0, len(a), 0, len(b))
	return d.script()
}

type differ struct {
	a, b       []int
	delA, insB []bool
	vf, vb     []int // indexed by diagonal + offset
}

func (d *differ) compareSeq(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo++
		bLo++
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi--
		bHi--
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		return
	}
	x, y := d.middleSnake(aLo, aHi, bLo, bHi)
	if (x == aLo && y == bLo) || (x == aHi && y == bHi) {
		// Cannot happen for an optimal split of non-trivial sequences; if
		// it did, recursing would not terminate. Replacing the block is
		// still a correct (if not minimal) script.
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	}
	d.compareSeq(aLo, x, bLo, y)
	d.compareSeq(x, aHi, y, bHi)
}

// middleSnake returns a point (x, y) on an optimal edit path from
// (aLo, bLo) to (aHi, bHi), strictly between the two for D ≥ 2.
// Coordinates inside are relative to (aLo, bLo); the forward V holds the
// furthest x on each diagonal k = x - y, the backward V the furthest
// distance walked back from the end on diagonal k' = (N-x) - (M-y).
func (d *differ) middleSnake(aLo, aHi, bLo, bHi int) (int, int) {
	a, b := d.a[aLo:aHi], d.b[bLo:bHi]
	N, M := len(a), len(b)
	delta := N - M
	odd := delta&1 != 0
	maxD := (N + M + 1) / 2
	off := N + M + 1
	vf, vb := d.vf, d.vb
	vf[off+1], vb[off+1] = 0, 0
	for D := 0; D <= maxD; D++ {
		// forward D-paths
		for k := -D; k <= D; k += 2 {
			var x int
			if k == -D || (k != D && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1] // down: insertion
			} else {
				x = vf[off+k-1] + 1 // right: deletion
			}
			y := x - k
			for x < N && y < M && a[x] == b[y] {
				x++
				y++
			}
			vf[off+k] = x
			if odd {
				kb := delta - k
				if kb >= -(D-1) && kb <= D-1 && x+vb[off+kb] >= N {
					return aLo + x, bLo + y
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
			for x < N && y < M && a[N-1-x] == b[M-1-y] {
				x++
				y++
			}
			vb[off+k] = x
			if !odd {
				kf := delta - k
				if kf >= -D && kf <= D && vf[off+kf]+x >= N {
					return aLo + N - x, bLo + M - y
				}
			}
		}
	}
	return aLo, bLo // unreachable: the paths always meet by maxD
}

// script turns the marks into maximal runs.
func (d *differ) script() []DiffOp {
	var ops []DiffOp
	add := func(k OpKind, ai, aj, bi, bj int) {
		if n := len(ops); n > 0 && ops[n-1].Kind == k {
			ops[n-1].AHi, ops[n-1].BHi = aj, bj
			return
		}
		ops = append(ops, DiffOp{Kind: k, ALo: ai, AHi: aj, BLo: bi, BHi: bj})
	}
	i, j := 0, 0
	for i < len(d.a) || j < len(d.b) {
		switch {
		case i < len(d.a) && d.delA[i]:
			add(OpDelete, i, i+1, j, j)
			i++
		case j < len(d.b) && d.insB[j]:
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
