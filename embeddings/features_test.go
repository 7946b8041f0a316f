package embeddings

import (
	"hash/fnv"
	"reflect"
	"sort"
	"testing"
)

// referenceFeatures is features as first written (a rune slice and a
// string per n-gram, hash/fnv): the committed model was trained on its
// hashes, so the faster features must give exactly these.
func referenceFeatures(o *LexicalOptions, text string) []feat {
	hash := func(ch int, s string) uint64 {
		f := fnv.New64a()
		f.Write([]byte(s))
		return f.Sum64()&^(3<<62) | uint64(ch)<<62
	}
	counts := map[uint64]float64{}
	var prev string
	for _, t := range Tokens(text) {
		if stopwords[t] {
			continue
		}
		st := Stem(t)
		counts[hash(chWord, st)]++
		if prev != "" {
			counts[hash(chBigram, prev+" "+st)]++
		}
		prev = st
		rs := []rune("^" + t + "$")
		if len(rs) <= o.CharMin {
			counts[hash(chChar, string(rs))]++
			continue
		}
		for n := o.CharMin; n <= o.CharMax; n++ {
			for i := 0; i+n <= len(rs); i++ {
				counts[hash(chChar, string(rs[i:i+n]))]++
			}
		}
	}
	out := make([]feat, 0, len(counts))
	for h, c := range counts {
		out = append(out, feat{h, c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].h < out[j].h })
	return out
}

func TestFeaturesMatchTheReference(t *testing.T) {
	texts := []string{
		"Send an email to bob@example.com about the Q3 report",
		"getWeatherForecast(city, days) returns the forecast",
		"ファイルを読み込んで内容を要約する", "搜索 GitHub 仓库", "Ünïcödé café naïve résumé",
		"a b c", "x", "", "emoji 🚀 launch 🚀🚀", "bad \xff\xfe bytes \xc3 here",
	}
	for _, o := range []LexicalOptions{{CharMin: 3, CharMax: 5}, {CharMin: 2, CharMax: 4}} {
		for _, s := range texts {
			if got, want := o.features(s), referenceFeatures(&o, s); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Errorf("%+v %q:\n got %v\nwant %v", o, s, got, want)
			}
		}
	}
}
