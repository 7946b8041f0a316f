// Package recommender proposes tools before the user asks: it scores every
// registered tool on five context signals and fuses them into one
// probability that is learned online from the user's feedback.
//
// The signals (Signal, one column of Features each, every score in [0,1]
// where 0 says nothing):
//
//   - space: what changed in the active spaces (file events), scored by the
//     live recommender;
//   - recent: the caller's recent calls (RecentScores);
//   - task: the task text (TextModel);
//   - conversation: the current chat's recent turns (TextModel);
//   - history: a sequence model of which call follows which, learned from
//     the logs (History: interpolated trigram → bigram → unigram with
//     exponential time decay).
//
// Fusion combines them: online logistic regression on the signal scores,
// their pairwise products and a small bounded per-tool bias, with prior
// weights so that it ranks sensibly before any feedback; an accepted
// recommendation is a positive example, a dismissed one a negative, an
// ignored one a weak negative.
//
// Every model here is bounded in memory, round-trips through JSON (the live
// recommender persists them) and is not safe for concurrent use: the caller
// holds the lock. Scoring is cheap (precomputed postings, no per-call
// allocation beyond the result map) because the live recommender
// recomputes after every signal event over the whole registry.
//
// evals/recommend measures the models on BFCL multi-turn conversations
// (`airs eval recommend`, EVALS.md "Recommendations (BFCL multi-turn)").
package recommender
