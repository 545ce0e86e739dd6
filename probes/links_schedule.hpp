// Which pairs `probe links` measures when: a round-robin tournament (the circle method), so n
// participants need n-1 rounds (n even) or n rounds (n odd, each sitting out once), every round
// a set of disjoint pairs measured at the same time. A full probe is O(n) rounds, not O(n^2).
#pragma once

#include <cstdint>
#include <vector>

namespace cb {

struct LinkPair {
  int a = 0;  // measured in both directions: a -> b, then b -> a
  int b = 0;
};

using LinkRound = std::vector<LinkPair>;

// Every unordered pair of 0..n-1 exactly once; pairs within a round are disjoint. n >= 1
// (n = 1: no rounds).
std::vector<LinkRound> tournament_rounds(int n);

// k rounds of a tournament over a random relabelling of 0..n-1 (same `seed`, same schedule on
// every rank): each participant meets k distinct partners (one fewer where it sits out a round
// of an odd n). k >= the tournament's round count gives the full tournament.
std::vector<LinkRound> sampled_rounds(int n, int k, std::uint64_t seed);

// The participant `p` meets in `round`, or -1 when it sits out.
int partner_in(const LinkRound& round, int p);

}  // namespace cb
