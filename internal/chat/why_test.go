package chat

import (
	"strings"
	"testing"
)

// /why after a request that failed before any call ran (a file it names is
// not there) explains that request: why it stopped and its candidates, not
// "no request yet" or an older request's table.
func TestWhyAfterAnError(t *testing.T) {
	r := newRig(t)
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("calculate 2 + 2")
	m = r.expect(m, "ok: calculator")
	m = r.expect(m, "> ")
	r.say("read the file nothere.txt in documents")
	m = r.expect(m, "nothere.txt")
	m = r.expect(m, "> ")
	r.say("/why")
	m = r.expect(m, `the last request ("read the file nothere.txt in documents") stopped before any call ran`)
	m = r.expect(m, "best first:")
	r.expect(m, "→ read-file")
	r.stop()
	out := r.out.String()
	why := out[strings.LastIndex(out, "best first:"):]
	if strings.Contains(out, "no request yet") || strings.Index(why, "read-file") > strings.Index(why, "calculator") {
		t.Errorf("/why did not explain the failed request:\n%s", out)
	}
}
