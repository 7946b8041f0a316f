package selector

import "testing"

func TestHowToSayFollowsWhatIsMissing(t *testing.T) {
	for _, c := range []struct {
		missing []string
		want    string
	}{
		{[]string{"a", "b"}, "quote the text, or name the files it is in"},
		{[]string{"path", "space"}, "name the file (for example report.pdf); name the space (a shared folder, for example documents)"},
		{[]string{"expression"}, "write the arithmetic (for example 12% of 350)"},
		{[]string{"target_language"}, "say the target language"},
		{nil, "say them in the request"},
	} {
		if got := HowToSay(c.missing); got != c.want {
			t.Errorf("HowToSay(%v) = %q, want %q", c.missing, got, c.want)
		}
	}
}
