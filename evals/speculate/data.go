// Package speculate measures speculative execution on a replay of the BFCL
// multi-turn conversations: every ground-truth call, with its arguments,
// is made in order through a real pipeline.Manager as the conversation's
// caller, the live recommender and speculation.Speculator (the predictor
// the engine runs) predicting and speculating after each turn and call,
// and the figures say how many real calls were answered from a
// speculation (hit rate), how much handler time that saved, and how much
// speculative work was never used (wasted). `airs eval speculate` is the
// command; EVALS.md, "Speculative execution (BFCL multi-turn replay)", has
// the figures.
//
// The replay's assumptions, fixed before the first run:
//
//   - BFCL's functions are stateful Python classes that cannot run here;
//     each is a handler that waits a fixed service time (Options.Service,
//     default 5 ms) and answers with its params. Hit rate and waste do not
//     depend on it; latency saved is in units of it.
//   - Which functions are read-only and idempotent is a list written from
//     their names and descriptions (readOnly below), not learned: a
//     function that changes the class's state (cd, mv, post_tweet,
//     place_order…) is a write, and invalidates every cached result, as a
//     write does in the pipeline. get_current_time is read-only but not
//     idempotent.
//   - Time: 60 s between a turn and the previous turn's last call (the
//     user reads and types), 2 s between a turn and its first call and
//     between calls (the model writes the next call). Speculation runs
//     after the turn arrives and after every call, and is done before the
//     next call (the model's 2 s are enough for a 5 ms tool).
//   - The recommender starts empty (default configuration, no training)
//     and learns online from the replayed calls, conversation after
//     conversation, in file order, as the live one would; nothing is
//     fitted to the figures.
package speculate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Conversation is one BFCL multi-turn conversation with its calls as
// written ("cd(folder='document')").
type Conversation struct {
	ID      string   `json:"id"`
	Classes []string `json:"involved_classes"`
	Turns   []struct {
		User  string   `json:"user"`
		Calls []string `json:"calls"`
	} `json:"turns"`
}

// Function is one BFCL multi-turn function.
type Function struct {
	Class       string          `json:"class"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Call is one parsed ground-truth call.
type Call struct {
	Name string
	Args json.RawMessage // a JSON object
}

// ParseCall parses a BFCL call, name(k=v, …), with Python literal values
// (strings in either quotes, numbers, True/False/None, lists, dicts,
// tuples as lists). Positional arguments (a few calls have them:
// cd('Reports')) take the names of params, the function's parameters in
// the order its documentation declares them.
func ParseCall(s string, params []string) (Call, error) {
	p := &pyParser{s: strings.TrimSpace(s)}
	name := p.ident()
	if name == "" || !p.eat('(') {
		return Call{}, fmt.Errorf("%q: not name(args)", s)
	}
	args := map[string]any{}
	for {
		p.space()
		if p.eat(')') {
			break
		}
		save := p.i
		k := p.ident()
		if k == "" || !p.eat('=') { // positional
			p.i = save
			if len(args) >= len(params) {
				return Call{}, fmt.Errorf("%q: positional argument %d, but the function declares %d parameters", s, len(args)+1, len(params))
			}
			k = params[len(args)]
		}
		v, err := p.value()
		if err != nil {
			return Call{}, fmt.Errorf("%q: %w", s, err)
		}
		args[k] = v
		p.space()
		if p.eat(',') {
			continue
		}
		if !p.eat(')') {
			return Call{}, fmt.Errorf("%q: want , or ) at %d", s, p.i)
		}
		break
	}
	b, err := json.Marshal(args)
	if err != nil {
		return Call{}, err
	}
	return Call{Name: name, Args: b}, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) ident() string {
	p.space()
	j := p.i
	for j < len(p.s) && (p.s[j] == '_' || p.s[j] == '.' || p.s[j] >= 'a' && p.s[j] <= 'z' || p.s[j] >= 'A' && p.s[j] <= 'Z' || j > p.i && p.s[j] >= '0' && p.s[j] <= '9') {
		j++
	}
	id := p.s[p.i:j]
	p.i = j
	return id
}

func (p *pyParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("value expected at end")
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		return p.str(c)
	case c == '[' || c == '(':
		end := byte(']')
		if c == '(' {
			end = ')'
		}
		p.i++
		out := []any{}
		for {
			if p.eat(end) {
				return out, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			if !p.eat(',') {
				if !p.eat(end) {
					return nil, fmt.Errorf("want , or %c at %d", end, p.i)
				}
				return out, nil
			}
		}
	case c == '{':
		p.i++
		out := map[string]any{}
		for {
			if p.eat('}') {
				return out, nil
			}
			k, err := p.value()
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok || !p.eat(':') {
				return nil, fmt.Errorf("want 'key': at %d", p.i)
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out[ks] = v
			if !p.eat(',') {
				if !p.eat('}') {
					return nil, fmt.Errorf("want , or } at %d", p.i)
				}
				return out, nil
			}
		}
	}
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(",)]}: ", rune(p.s[j])) {
		j++
	}
	tok := p.s[p.i:j]
	p.i = j
	switch tok {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	}
	if _, err := strconv.ParseFloat(tok, 64); err != nil {
		return nil, fmt.Errorf("unknown literal %q", tok)
	}
	return json.Number(tok), nil
}

func (p *pyParser) str(q byte) (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			p.i++
			switch e := p.s[p.i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
		p.i++
	}
	return "", fmt.Errorf("unterminated string")
}

// ParamOrder is the names of a function's parameters in the order its
// documentation declares them (the order of "properties").
func ParamOrder(parameters json.RawMessage) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(parameters, &top) != nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(top["properties"]))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return out
		}
		out = append(out, t.(string))
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

// readOnly are the functions that only read or compute (and are
// idempotent: the same call answers the same while nothing writes),
// written from their names and descriptions before any run. Every other
// function changes its class's state.
var readOnly = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`
		cat diff du find grep ls pwd sort tail wc
		absolute_value add divide imperial_si_conversion logarithm max_value mean min_value multiply
		percentage power round_number si_unit_conversion square_root standard_deviation subtract sum_values
		get_message_stats get_user_id list_users message_get_login_status search_messages view_messages_sent
		get_tweet get_tweet_comments get_user_stats get_user_tweets list_all_following posting_get_login_status search_tweets
		get_ticket get_user_tickets ticket_get_login_status
		filter_stocks_by_price get_account_info get_available_stocks get_order_details get_order_history
		get_stock_info get_symbol_by_name get_transaction_history get_watchlist trading_get_login_status
		compute_exchange_rate get_all_credit_cards get_booking_history get_budget_fiscal_year get_credit_card_balance
		get_flight_cost get_nearest_airport_by_city list_all_airports retrieve_invoice travel_get_login_status
		verify_traveler_information
		check_tire_pressure displayCarStatus display_log estimate_distance estimate_drive_feasibility_by_mileage
		find_nearest_tire_shop gallon_to_liter get_current_speed get_outside_temperature_from_google
		get_outside_temperature_from_weather_com get_zipcode_based_on_city liter_to_gallon`) {
		readOnly[n] = true
	}
}

// readNotIdempotent reads but may answer differently each time.
var readNotIdempotent = map[string]bool{"get_current_time": true}

// CallName is a call's function name: the text before "(".
func CallName(call string) string {
	name, _, _ := strings.Cut(call, "(")
	return strings.TrimSpace(name)
}
