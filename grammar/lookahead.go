package grammar

// Lookahead, exactly, by automaton intersection.
//
// A lookahead asserts something about the rest of the string from where it
// stands: (?=X) that some prefix of the rest matches X, (?!X) that none
// does. When the pattern after the lookahead is a plain sequence R (to the
// end of the string), the strings matched from there are R ∩ XΣ* (or
// R ∖ XΣ*), and the strings before it concatenate as usual. So a pattern
// A (?!X) B is A·(B·T ∖ X·Σ*), with T = Σ* unless B ends in $: regular, and
// built right to left over the top-level sequence with the DFA product and
// complement. An alternation or an optional group holding a lookahead
// distributes over what follows it ((G1|G2)·R = G1·R ∪ G2·R). Refused: a
// lookahead inside a repetition ((?:(?!x).)* needs a check at every step),
// and ^ or $ anywhere but the ends of the pattern (or ^ in a lookahead at
// its start).

func hasLook(x *reNode) bool {
	if x.kind == reLook {
		return true
	}
	for _, s := range x.subs {
		if hasLook(s) {
			return true
		}
	}
	return false
}

func hasAnchor(x *reNode) bool {
	if x.kind == reBOL || x.kind == reEOL {
		return true
	}
	for _, s := range x.subs {
		if hasAnchor(s) {
			return true
		}
	}
	return false
}

func hasKind(x *reNode, k reKind) bool {
	if x.kind == k {
		return true
	}
	for _, s := range x.subs {
		if hasKind(s, k) {
			return true
		}
	}
	return false
}

// flatCat lists x as a sequence: nested concatenations (groups) are one
// sequence.
func flatCat(x *reNode) []*reNode {
	if x.kind != reCat {
		if x.kind == reEmpty {
			return nil
		}
		return []*reNode{x}
	}
	var out []*reNode
	for _, s := range x.subs {
		out = append(out, flatCat(s)...)
	}
	return out
}

func lookaheadDFA(tree *reNode) (d *rdfa, err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*reError); ok {
				d, err = nil, e
				return
			}
			panic(r)
		}
	}()
	items := flatCat(tree)
	bol := len(items) > 0 && items[0].kind == reBOL
	if bol {
		items = items[1:]
	}
	eol := len(items) > 0 && items[len(items)-1].kind == reEOL
	if eol {
		items = items[:len(items)-1]
	}
	anyStar := starDFA(anyRune)
	tail := anyStar
	if eol {
		tail = literalsDFA([]string{""})
	}
	r := lookFold(items, tail, bol)
	if !bol {
		r = concatDFA(anyStar, r)
	}
	return r, nil
}

// lookFold returns the language of items followed by a string of rest. bol:
// items start at the beginning of the string (^ in a lookahead there holds).
func lookFold(items []*reNode, rest *rdfa, bol bool) *rdfa {
	r := rest
	end := len(items)
	flush := func(lo int) {
		if lo < end {
			r = concatItems(items[lo:end], r)
		}
		end = lo
	}
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		switch {
		case it.kind == reLook:
			flush(i + 1)
			end = i
			atStart := bol
			for _, p := range items[:i] {
				if p.kind != reLook {
					atStart = false
				}
			}
			x := lookLang(it.subs[0], atStart)
			if it.neg {
				x = complementDFA(x, anyRune)
			}
			r = intersectDFA(r, x).trim().minimize()
		case hasLook(it):
			flush(i + 1)
			end = i
			atStart := bol && i == 0
			switch {
			case it.kind == reAlt:
				var u *rdfa
				for _, s := range it.subs {
					b := lookFold(flatCat(s), r, atStart)
					if u == nil {
						u = b
					} else {
						u = unionDFA(u, b).trim().minimize()
					}
				}
				r = u
			case it.kind == reRep && it.min == 0 && it.max == 1:
				r = unionDFA(r, lookFold(flatCat(it.subs[0]), r, atStart)).trim().minimize()
			case it.kind == reRep && it.min == 1 && it.max == 1:
				r = lookFold(flatCat(it.subs[0]), r, atStart)
			default:
				panic(&reError{"lookahead inside a repetition is not supported: it would be checked at every repetition, not regular in this construction"})
			}
		case hasAnchor(it):
			panic(&reError{"^ or $ inside a pattern with lookahead is not supported"})
		}
	}
	flush(0)
	return r
}

// lookLang is X·Σ*: the strings some prefix of which matches x ($ in x
// being their end).
func lookLang(x *reNode, bol bool) *rdfa {
	if hasLook(x) {
		panic(&reError{"nested lookahead is not supported"})
	}
	if !bol && hasKind(x, reBOL) {
		panic(&reError{"^ inside a lookahead not at the start of the pattern is not supported"})
	}
	c := &reCompiler{n: &rnfa{}, limit: 40000}
	s, e := c.comp(x)
	post := c.n.add()
	c.n.epsTo(e, post)
	c.n.edge(post, anyRune, post)
	return c.n.determinize(s, post)
}

// concatItems is the language of items followed by one of rest.
func concatItems(items []*reNode, rest *rdfa) *rdfa {
	c := &reCompiler{n: &rnfa{}, limit: 40000}
	s, e := c.comp(items[0])
	for _, it := range items[1:] {
		s2, e2 := c.comp(it)
		c.n.epsTo(e, s2)
		e = e2
	}
	rs, re := rest.toNFA(c.n)
	c.n.epsTo(e, rs)
	return c.n.determinize(s, re)
}
